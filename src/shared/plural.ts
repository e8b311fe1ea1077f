/** "1 document", "2,500 documents": a count with its noun, for messages in main and the window alike. */
export const plural = (n: number, word: string): string => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`
