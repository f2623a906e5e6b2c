export * from './users.ts';
export * from './system.ts';
export * from './facility.ts';
export * from './settings.ts';
export * from './uploads.ts';
export * from './reports.ts';
export * from './alarms.ts';
export * from './energy.ts';
