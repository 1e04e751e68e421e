/**
 * A test's kill at a chosen step (PLUGIN_LICENSE_TEST_KILL_AT=LABEL or LABEL#N, the Nth time):
 * a real SIGKILL at a controlled point, so the next run's settling is tested against what a
 * power cut leaves. The steps are those of `plugins install|uninstall` and the library's durable
 * writes (`intent-recorded`, `ticket-written`, `release-answered`, … of a deactivation or release).
 * Unset (always, outside tests): nothing happens.
 */
export function killAtStep(env: Readonly<Record<string, string | undefined>>): ((label: string) => void) | undefined {
  const at = env.PLUGIN_LICENSE_TEST_KILL_AT;
  if (at === undefined || at === '') return undefined;
  const [label, nth] = at.split('#');
  let seen = 0;
  return (step) => {
    if (step === label && ++seen === Number(nth ?? '1')) process.kill(process.pid, 'SIGKILL');
  };
}
