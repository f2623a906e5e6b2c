// Configuration rows: per-user dashboard settings, the platform config and the 3D scene (single rows, id 1).
import { integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { updatedAt } from './columns.ts';
import { users } from './users.ts';

export type DashboardWidget = { id: string; type: string; x: number; y: number; w: number; h: number; options?: Record<string, unknown> };
export type Vec3 = { x: number; y: number; z: number };
export type CameraPreset = { position: Vec3; target: Vec3; fov: number };
export type Hotspot = { id: string; name: string; position: Vec3; pointCode?: string; area?: string };
export type SceneLabel = { id: string; text: string; position: Vec3 };

export const dashboardSettings = sqliteTable('dashboard_settings', {
  userId: integer('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  layout: text('layout', { mode: 'json' }).$type<DashboardWidget[]>().notNull(),
  refreshIntervalSec: integer('refresh_interval_sec').notNull().default(30),
  theme: text('theme').notNull().default('light'),
  updatedAt: updatedAt(),
});

export const platformConfig = sqliteTable('platform_config', {
  id: integer('id').primaryKey(),
  siteName: text('site_name').notNull(),
  logoUrl: text('logo_url'),
  timezone: text('timezone').notNull(),
  locale: text('locale').notNull(),
  currency: text('currency').notNull(),
  electricityPrice: real('electricity_price').notNull(),
  carbonFactor: real('carbon_factor').notNull(),
  refreshIntervalSec: integer('refresh_interval_sec').notNull(),
  /** The site's gross floor area (m²), the denominator of its energy intensity; null: not entered. */
  floorAreaM2: real('floor_area_m2'),
  /** Which of name, time zone and currency a person has set (set-up, PUT /api/configs, emsctl site set), whatever the value. */
  confirmedFields: text('confirmed_fields', { mode: 'json' }).$type<string[]>().notNull().default([]),
  updatedAt: updatedAt(),
});

export const threeDConfig = sqliteTable('three_d_config', {
  id: integer('id').primaryKey(),
  cameraPreset: text('camera_preset', { mode: 'json' }).$type<CameraPreset>().notNull(),
  ambientIntensity: real('ambient_intensity').notNull(),
  hotspots: text('hotspots', { mode: 'json' }).$type<Hotspot[]>().notNull(),
  labels: text('labels', { mode: 'json' }).$type<SceneLabel[]>().notNull(),
  modelFileId: integer('model_file_id'),
  updatedAt: updatedAt(),
});
