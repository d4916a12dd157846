import type { EventType } from './event-types';

/**
 * One example event of each type, as a receiver gets it (GET /v1/event-types). Checked
 * against the event schemas by test/unit/event-types.test.ts, so an example never drifts
 * from what is sent.
 */
const call = {
  id: 'call_01jdq3k7m2x8v4n6p9r1s3t5w7',
  object: 'call',
  direction: 'inbound',
  status: 'completed',
  from_number: '+15125550143',
  to_number: '+15125550100',
  caller_name: 'Dana Whitfield',
  started_at: '2026-11-24T14:02:11.000Z',
  ended_at: '2026-11-24T14:05:47.000Z',
  duration_seconds: 216,
  outcome: 'job_created',
  created_at: '2026-11-24T14:02:11.000Z',
};

const job = (
  status: 'pending' | 'approved' | 'declined',
  version: number,
  decidedAt: string | null,
  declineReason: string | null = null,
) => ({
  id: 'job_01jdq3ph4c6e8g0j2k4m6n8q0r',
  object: 'job',
  version,
  status,
  call_id: call.id,
  customer: { name: 'Dana Whitfield', phone: '+15125550143', address: '2207 Larkspur Ln, Austin, TX 78745' },
  service: 'Water heater repair',
  description: 'No hot water since this morning; the pilot light will not stay lit on a 40-gallon gas heater.',
  urgency: 'urgent',
  requested_window: { start: '2026-11-25T15:00:00.000Z', end: '2026-11-25T19:00:00.000Z' },
  created_at: '2026-11-24T14:05:48.000Z',
  updated_at: decidedAt ?? '2026-11-24T14:05:48.000Z',
  decided_at: decidedAt,
  decline_reason: declineReason,
});

const endpoint = {
  id: 'we_01jdn8w2y4a6c8e0g2h4j6k8m0',
  object: 'webhook_endpoint',
  url: 'https://crm.example.com/hooks/shop-calls',
  description: 'CRM sync',
  events: ['call.completed', 'job.created'],
  filter: null,
  ordering: 'none',
  rate_limit: null,
  enabled: false,
  disabled_reason: 'failing',
  failing_since: '2026-11-21T09:14:02.000Z',
  health: {
    circuit: 'open',
    consecutive_failures: 23,
    last_success_at: '2026-11-21T09:12:40.000Z',
    last_failure_at: '2026-11-24T09:20:31.000Z',
    next_probe_at: null,
  },
  created_at: '2026-10-02T16:40:00.000Z',
  updated_at: '2026-11-24T09:20:31.000Z',
};

const event = (type: EventType, id: string, timestamp: string, data: object) => ({
  id,
  object: 'event',
  type,
  timestamp,
  data,
});

export const EVENT_EXAMPLES: Record<EventType, object> = {
  'call.completed': event('call.completed', 'evt_01jdq3pg0a2b4c6d8e0f2g4h6j', '2026-11-24T14:05:47.000Z', call),
  'job.created': event(
    'job.created',
    'evt_01jdq3ph4c6e8g0j2k4m6n8q0s',
    '2026-11-24T14:05:48.000Z',
    job('pending', 1, null),
  ),
  'job.approved': event(
    'job.approved',
    'evt_01jdq5tz8v0x2z4b6d8f0h2k4m',
    '2026-11-24T14:41:09.000Z',
    job('approved', 2, '2026-11-24T14:41:09.000Z'),
  ),
  'job.declined': event(
    'job.declined',
    'evt_01jdq5v0a2c4e6g8j0k2m4p6r8',
    '2026-11-24T14:41:30.000Z',
    job('declined', 2, '2026-11-24T14:41:30.000Z', 'Outside our service area.'),
  ),
  'webhook_endpoint.disabled': event(
    'webhook_endpoint.disabled',
    'evt_01jdpq1r3t5v7x9z1b3d5f7h9k',
    '2026-11-24T09:20:31.000Z',
    endpoint,
  ),
  'webhook_endpoint.test': event(
    'webhook_endpoint.test',
    'evt_01jdr0a2c4e6g8j0k2m4p6r8t0',
    '2026-11-24T16:00:00.000Z',
    {
      endpoint_id: endpoint.id,
    },
  ),
};
