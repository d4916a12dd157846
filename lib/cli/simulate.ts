import { randomBytes, randomInt } from 'node:crypto';
import type { CallIngest, JobInput } from '../../shared/domain/call-ingest-schema';
import type { Shop } from '../../shared/domain/shop';

const CALLERS = [
  'Maria Lopez',
  'James Carter',
  'Priya Shah',
  'Tom Becker',
  'Aisha Okafor',
  'Liam Walsh',
  'Chen Wei',
  'Sofia Rossi',
];
const STREETS = ['Maple Ave', 'Oak St', 'Cedar Ln', 'Elm Dr', 'Birch Rd', 'Pine Ct'];
const SERVICES: Record<string, { service: string; problem: string; emergency: string }[]> = {
  plumbing: [
    {
      service: 'Leak repair',
      problem: 'the kitchen sink is dripping under the cabinet',
      emergency: 'a pipe burst and water is flooding the basement',
    },
    {
      service: 'Water heater service',
      problem: 'there is no hot water since this morning',
      emergency: 'the water heater is leaking all over the garage',
    },
    { service: 'Drain cleaning', problem: 'the shower drain is slow', emergency: 'sewage is backing up into the tub' },
  ],
  electrical: [
    {
      service: 'Outlet repair',
      problem: 'two outlets in the living room stopped working',
      emergency: 'an outlet is sparking and smells burnt',
    },
    {
      service: 'Panel inspection',
      problem: 'the breaker keeps tripping',
      emergency: 'the panel is buzzing loudly and hot to touch',
    },
  ],
  hvac: [
    {
      service: 'Furnace repair',
      problem: 'the furnace makes a rattling noise',
      emergency: 'there is no heat and it is below freezing',
    },
    { service: 'AC tune-up', problem: 'the AC is blowing warm air', emergency: 'the AC unit is smoking' },
  ],
};

const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)] as T;
const phone = () => `+1415555${String(randomInt(100, 10000)).padStart(4, '0')}`;

export interface SimulateOptions {
  withJob: boolean;
  emergency: boolean;
  /** When the call ended; calls of one run are spaced a few minutes apart. */
  endedAt: Date;
}

/** A realistic finished call for `shop`, in the shape the voice platform sends to ingest. */
export function simulatedCall(shop: Shop, options: SimulateOptions): CallIngest {
  const caller = pick(CALLERS);
  const callback = phone();
  const address = `${randomInt(10, 9999)} ${pick(STREETS)}`;
  const job = pick(SERVICES[shop.trade] ?? SERVICES.plumbing ?? []);
  const problem = options.emergency ? job.emergency : job.problem;
  const urgency = options.emergency ? 'emergency' : options.withJob ? 'routine' : null;
  const turns: [CallIngest['transcript'][number]['speaker'], string][] = [
    ['agent', shop.greeting],
    ['caller', `Hi, this is ${caller}. ${problem[0]?.toUpperCase()}${problem.slice(1)}.`],
    [
      'agent',
      options.emergency
        ? 'I am sorry to hear that. Is everyone safe? I am flagging this as an emergency.'
        : 'I can help with that. Can I get your address?',
    ],
    ['caller', `Sure, it is ${address}.`],
    ['agent', 'And the best number to reach you?'],
    ['caller', `You can call me back on ${callback}.`],
    [
      'agent',
      options.withJob
        ? `Thanks ${caller.split(' ')[0]}, I have created a request for ` +
          `${job.service.toLowerCase()}. The team will confirm shortly.`
        : 'Thanks, I will pass your message to the team.',
    ],
    ['caller', 'Great, thank you.'],
  ];
  const durationS = 60 + randomInt(240);
  const started = new Date(options.endedAt.getTime() - durationS * 1000);
  const jobInput: JobInput = {
    customer: { name: caller, phone: callback, address },
    service: job.service,
    description: `Caller reports ${problem}.`,
    urgency: options.emergency ? 'emergency' : 'routine',
    requested_window: options.emergency
      ? null
      : {
          start: new Date(options.endedAt.getTime() + 86_400_000).toISOString(),
          end: new Date(options.endedAt.getTime() + 90_000_000).toISOString(),
        },
  };
  return {
    shop_id: shop.id,
    external_id: `sim-${randomBytes(8).toString('hex')}`,
    status: 'completed',
    from_number: callback,
    to_number: shop.phone_number,
    caller_name: caller,
    started_at: started.toISOString(),
    ended_at: options.endedAt.toISOString(),
    transcript: turns.map(([speaker, text], i) => ({
      speaker,
      text,
      offset_ms: Math.round((i * durationS * 1000) / turns.length),
    })),
    summary: {
      summary:
        `${caller} called about ` +
        `${problem}.${options.withJob ? ` A ${job.service.toLowerCase()} job was created.` : ' A message was taken.'}`,
      outcome: options.emergency ? 'emergency_escalated' : options.withJob ? 'job_created' : 'message_taken',
      details: { caller_name: caller, callback_number: callback, service_requested: job.service, address, urgency },
      usage: { credits: Math.ceil(durationS / 60), billable_seconds: durationS },
    },
    jobs: options.withJob ? [jobInput] : [],
  };
}
