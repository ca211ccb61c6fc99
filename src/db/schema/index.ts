export * from './organisations.js';
export * from './venues.js';
export * from './api-keys.js';
export * from './idempotency-keys.js';
export * from './events.js';
