export type RoleName = 'web' | 'events' | 'webhooks' | 'imports' | 'timers';

/** Every role, in a fixed order: a role's index also gives its default metrics port (9464 + index). */
export const allRoles: RoleName[] = ['web', 'events', 'webhooks', 'imports', 'timers'];
