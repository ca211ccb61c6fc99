/**
 * Whether the environment turns tracing on (docs/operations.md "Tracing"): an OTLP endpoint is set
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_TRACES_EXPORTER names
 * an exporter; OTEL_SDK_DISABLED=true turns it off whatever else is set, as the specification says.
 */
export function isTracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (exporters.includes('none')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || exporters.length);
}

/**
 * The service.name a process gives itself: `floorline-<role>` for one role, `floorline` for several
 * (`npm start`); undefined when the environment names the service (OTEL_SERVICE_NAME, or service.name
 * in OTEL_RESOURCE_ATTRIBUTES), which the SDK then uses.
 */
export function defaultServiceName(env: NodeJS.ProcessEnv, roles: readonly string[]): string | undefined {
  if (env.OTEL_SERVICE_NAME?.trim()) return undefined;
  const named = (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').some((pair) => pair.split('=', 1)[0].trim() === 'service.name');
  if (named) return undefined;
  return roles.length === 1 ? `floorline-${roles[0]}` : 'floorline';
}
