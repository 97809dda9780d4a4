// The simulated network, up: every relay listening (or refusing) on loopback, holding its events.
import type { Accounting } from './accounting.js';
import { type Dataset, makeDataset } from './dataset.js';
import { planRelays, type RelayPlan } from './plan.js';
import type { PortBook } from './ports.js';
import type { Random } from './random.js';
import { type SimRelay, startRelay } from './relays.js';

export interface Network {
  plan: RelayPlan;
  relays: SimRelay[];
  dataset: Dataset;
  urlOf(relay: number): string;
  stop(): Promise<void>;
}

export async function startNetwork(
  random: Random,
  options: { relays: number; users: number; seed: number },
  accounting: Accounting,
  ports: PortBook,
): Promise<Network> {
  const plan = planRelays(random, options.relays);
  const relays: SimRelay[] = [];
  const stop = async () => {
    await Promise.all(relays.map((relay) => relay.stop()));
  };
  try {
    for (const spec of plan.specs) {
      const relay = await startRelay(spec, accounting, () => ports.free());
      ports.note(relay.port);
      relays.push(relay);
    }
    const urlOf = (relay: number) => (relays[relay] as SimRelay).url;
    const dataset = makeDataset(random, options.seed, options.users, plan, urlOf);
    const byId = new Map(
      dataset.users.flatMap((user) => [user.profile, ...(user.relayList ? [user.relayList] : []), ...user.notes.map((note) => note.event)]).map((event) => [event.id, event]),
    );
    for (const [id, held] of dataset.placement) {
      for (const relay of held) relays[relay]?.hold(byId.get(id) as NonNullable<ReturnType<typeof byId.get>>);
    }
    return { plan, relays, dataset, urlOf, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
