import { chaosRunLine } from './global-setup';

/** The run's chaos value again, beside jest's summary, where a failure is read. */
export default function chaosGlobalTeardown(): void {
  console.log(chaosRunLine());
}
