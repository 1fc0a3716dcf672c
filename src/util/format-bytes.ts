/** A size for people: "812 B", "14.2 KB", "3.5 MB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1_048_576) return `${oneDecimal(n / 1024)} KB`;
  return `${oneDecimal(n / 1_048_576)} MB`;
}

function oneDecimal(x: number): string {
  return x.toFixed(1).replace(/\.0$/, "");
}
