/** A Redis Cluster node to start from; the client learns the others from it (CLUSTER SLOTS). */
export interface ClusterSeed {
  host: string;
  port: number;
}

/** REDIS_CLUSTER_NODES, read: the seed nodes and the credentials and TLS every node shares. */
export interface ClusterSeeds {
  nodes: ClusterSeed[];
  username?: string;
  password?: string;
  /** `rediss://` entries: every node is reached over TLS. */
  tls: boolean;
}

/** More seeds than this is a mistake (a cluster is found from any one of them). */
const MAX_SEEDS = 64;

/**
 * Reads REDIS_CLUSTER_NODES: comma-separated `host:port` entries, or `redis://` / `rediss://` URLs
 * as REDIS_URL takes them (`rediss://user:pass@host:port`). One cluster has one set of
 * credentials and one transport, so every entry must agree on them. Returns what is wrong, as a
 * sentence, when it cannot be read; never echoes a password.
 */
export function parseClusterNodes(text: string): ClusterSeeds | string {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) return 'name at least one node as host:port';
  if (entries.length > MAX_SEEDS) return `at most ${MAX_SEEDS} seed nodes`;
  const nodes: ClusterSeed[] = [];
  let shared: { protocol: string; username: string; password: string } | undefined;
  for (const [index, entry] of entries.entries()) {
    const where = `entry ${index + 1}`;
    let url: URL;
    try {
      url = new URL(entry.includes('://') ? entry : `redis://${entry}`);
    } catch {
      return `${where} is not host:port or a redis:// URL`;
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return `${where} must be host:port, redis:// or rediss://`;
    if (url.hostname === '') return `${where} has no host`;
    // URL percent-encodes what a host name cannot hold: such a host would only fail at DNS.
    if (url.hostname.includes('%')) return `${where} has a host name with characters no host name holds`;
    // A cluster has no databases (SELECT is refused), and nothing else may follow the address.
    if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
      return `${where} must be only an address (no database, path or query: a cluster has database 0 only)`;
    }
    // URL drops a port equal to the scheme's default; Redis has no default in URLs' eyes, so an
    // empty port means none was written.
    if (url.port === '') return `${where} has no port (host:port)`;
    const port = Number(url.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) return `${where} has a port outside 1–65535`;
    const username = decoded(url.username);
    const password = decoded(url.password);
    if (username === undefined || password === undefined) return `${where} has credentials with a broken %-escape`;
    // Redis ACL users authenticate with a password; a user alone would fail AUTH on every node.
    if (username !== '' && password === '') return `${where} names a user without a password (redis://user:password@host:port)`;
    const credentials = { protocol: url.protocol, username, password };
    if (shared && (shared.protocol !== credentials.protocol || shared.username !== credentials.username || shared.password !== credentials.password)) {
      return `${where} differs from entry 1 in its scheme or credentials: one cluster has one set of both`;
    }
    shared ??= credentials;
    // IPv6 literals come bracketed from URL; the client wants the bare address.
    nodes.push({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port });
  }
  const { protocol, username, password } = shared as NonNullable<typeof shared>;
  return {
    nodes,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    tls: protocol === 'rediss:',
  };
}

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The seeds as a log line may show them: addresses only, never credentials. */
export function describeSeeds({ nodes, tls }: ClusterSeeds): string {
  const scheme = tls ? 'rediss' : 'redis';
  return nodes.map(({ host, port }) => `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`).join(',');
}
