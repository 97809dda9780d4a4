/**
 * NIP-01 relay-to-client messages, checked for shape before nostr-tools reads them. nostr-tools
 * assumes well-formed messages (it reports the others with console.warn, a channel a hostile relay
 * could flood), so anything else is dropped here, silently and cheaply.
 *
 *   ["EVENT", <subscription id>, <event object>]   ["EOSE", <subscription id>]
 *   ["CLOSED", <subscription id>, <message>]       ["NOTICE", <message>]
 *   ["OK", <event id>, <true|false>, <message>]     ["AUTH", <challenge>]   (NIP-42)
 *   ["COUNT", <subscription id>, {"count": <n>}]    (NIP-45)
 *
 * Event contents are not checked here: every event is verified (NIP-01 id and signature) after.
 */
export function isRelayMessage(data: unknown): boolean {
  if (typeof data !== 'string' || data.length === 0 || data[0] !== '[') return false;
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return false;
  }
  if (!Array.isArray(message) || typeof message[0] !== 'string' || typeof message[1] !== 'string') return false;
  switch (message[0]) {
    case 'EVENT':
      return message.length === 3 && isPlainObject(message[2]);
    case 'EOSE':
      return message.length === 2;
    case 'CLOSED':
      return message.length === 3 && typeof message[2] === 'string';
    case 'NOTICE':
    case 'AUTH':
      return message.length === 2;
    case 'OK':
      return message.length === 4 && typeof message[2] === 'boolean' && typeof message[3] === 'string';
    case 'COUNT':
      return message.length === 3 && isPlainObject(message[2]) && typeof message[2].count === 'number';
    default:
      return false;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
