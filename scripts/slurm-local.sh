#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, for the batch-tagging test.
#   scripts/slurm-local.sh start DIR   → slurmctld + slurmd (+ munged) with state under DIR;
#                                        prints the SLURM_CONF to export
#   scripts/slurm-local.sh stop DIR
# Needs Debian's slurm-wlm and munge (.ci/run installs them) and root (slurmd runs jobs as users).
set -euo pipefail
cmd=${1:?start|stop}
dir=$(realpath -m "${2:?state folder}")
conf="$dir/slurm.conf"

case "$cmd" in
start)
  mkdir -p "$dir"/{state,spool,log}
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
  cat > "$conf" <<CONF
ClusterName=fastbioner-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=${SLURMCTLD_PORT:-16817}
SlurmdPort=${SLURMD_PORT:-16818}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobRequeue=1
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  # munge: one key for this machine, made once.
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge && dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    chown munge:munge /etc/munge/munge.key 2>/dev/null || true
    chmod 400 /etc/munge/munge.key
  fi
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
  if ! munge -n >/dev/null 2>&1; then
    if id munge >/dev/null 2>&1; then runuser -u munge -- /usr/sbin/munged --force; else /usr/sbin/munged --force; fi
    sleep 1
  fi
  SLURM_CONF=$conf /usr/sbin/slurmctld -c
  SLURM_CONF=$conf /usr/sbin/slurmd
  for _ in $(seq 1 60); do
    if SLURM_CONF=$conf sinfo -h -o '%T' 2>/dev/null | grep -qE '^idle'; then
      echo "SLURM_CONF=$conf"
      exit 0
    fi
    sleep 1
  done
  echo "slurm did not become ready; logs in $dir/log" >&2
  exit 1
  ;;
stop)
  pids=()
  for p in slurmd slurmctld; do
    if [ -f "$dir/$p.pid" ]; then
      pid=$(cat "$dir/$p.pid")
      kill "$pid" 2>/dev/null && pids+=("$pid")
    fi
  done
  # Wait until they have exited (they save state on the way out), so DIR can be removed.
  for _ in $(seq 1 100); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac
