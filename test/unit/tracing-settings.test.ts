import { describe, expect, it } from 'vitest';
import { defaultServiceName, isTracingWanted } from '../../src/lib/tracing-settings.js';
import { traceIdOf } from '../../src/tracing/tracing.js';

describe('isTracingWanted: tracing is on only when the environment says so', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }, false],
  ])('%j → %s', (env, on) => {
    expect(isTracingWanted(env)).toBe(on);
  });
});

describe('defaultServiceName: floorline-<role>, floorline for several, the environment first', () => {
  it.each([
    [{}, ['web'], 'floorline-web'],
    [{}, ['webhooks'], 'floorline-webhooks'],
    [{}, ['web', 'events', 'webhooks', 'imports', 'timers'], 'floorline'],
    [{ OTEL_SERVICE_NAME: 'bookings-eu' }, ['web'], undefined],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=bookings' }, ['web'], undefined],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod' }, ['events'], 'floorline-events'],
  ])('%j %j → %s', (env, roles, name) => {
    expect(defaultServiceName(env, roles)).toBe(name);
  });
});

describe('traceIdOf: the trace id of a traceparent', () => {
  it.each([
    ['00-0daab137040b8e34fa3b37e7d0e7d05d-12a8da2c186abece-01', '0daab137040b8e34fa3b37e7d0e7d05d'],
    ['00-0daab137040b8e34fa3b37e7d0e7d05d-12a8da2c186abece-00', '0daab137040b8e34fa3b37e7d0e7d05d'],
    ['00-0daab137040b8e34fa3b37e7d0e7d05d-12a8da2c186abece', null],
    ['not a traceparent', null],
    [null, null],
  ])('%s → %s', (traceparent, traceId) => {
    expect(traceIdOf(traceparent)).toBe(traceId);
  });
});
