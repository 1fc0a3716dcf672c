/** Which hosts and client addresses only this machine can reach. */

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/** True for a client's socket address on this machine (IPv4 127/8, ::1, IPv4-mapped loopback). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined || address === "localhost") return false;
  return isLoopbackHost(address.replace(/^::ffff:/i, ""));
}
