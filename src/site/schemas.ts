// Shapes of the platform configuration and the 3D scene configuration (both single rows).
import { NullableString } from '../access/index.ts';
import { Type, type Static } from '@sinclair/typebox';
import { displayTextPattern, Email, Timestamp } from '../platform/http/schemas.ts';

const Coordinate = Type.Number({ minimum: -1_000_000, maximum: 1_000_000 });
export const Vec3 = Type.Object({ x: Coordinate, y: Coordinate, z: Coordinate });
const ItemId = Type.String({ minLength: 1, maxLength: 64, description: 'unique within its list' });

// A path is a path: `//host/x` and `/\host/x` are other hosts to a browser, so a path may not start with either.
export const LogoUrl = NullableString({
  maxLength: 2048,
  pattern: '^(https?://[^\\s/\\\\]+[^\\s]*|/(?![/\\\\])[^\\s]*)$',
  description: 'http(s) URL, or a path on this host (not starting with // or /\\)',
});

export const PlatformConfig = Type.Object({
  siteName: Type.String(),
  logoUrl: Type.Union([Type.String(), Type.Null()]),
  timezone: Type.String({ description: 'IANA time zone; the site day for energy figures starts at its midnight' }),
  locale: Type.String({ description: 'BCP 47 language tag' }),
  currency: Type.String({ description: 'ISO 4217 code' }),
  electricityPrice: Type.Number({ description: 'price per kWh in currency' }),
  carbonFactor: Type.Number({ description: 'kg CO2 per kWh' }),
  refreshIntervalSec: Type.Integer({ description: 'how often screens should poll' }),
  floorAreaM2: Type.Union([Type.Number(), Type.Null()], {
    description:
      "the site's gross floor area in m² (its buildings, not the end-use areas): the denominator of the site intensity in GET /api/analysis/enpi; null: not entered",
  }),
  updatedAt: Timestamp,
});
export type PlatformConfigView = Static<typeof PlatformConfig>;

export const PriceInForce = Type.Object(
  {
    price: Type.Number({ description: 'per kWh in currency: what a kWh drawn today costs (before time-of-use bands)' }),
    validFrom: Type.String({ format: 'date', description: 'the site day its tariff version applies from' }),
    tariffVersionId: Type.Integer(),
    source: Type.Union([Type.Literal('setup'), Type.Literal('tariff'), Type.Literal('install')], {
      description:
        "setup: electricityPrice above, made the site's tariff from the day it was entered; tariff: a tariff version an admin entered (electricityPrice then prices only hand-entered area cards); install: the price seeded at install (no price entered since)",
    }),
  },
  { description: 'the electricity price in force today (GET /api/energy/tariffs has the versions)' },
);
export type PriceInForce = Static<typeof PriceInForce>;

/** What GET and PUT /api/configs answer: the settings and the price in force. */
export const PlatformConfigAnswer = Type.Object({ ...PlatformConfig.properties, priceInForce: Type.Union([PriceInForce, Type.Null()]) });

export const PlatformConfigUpdate = Type.Object(
  {
    siteName: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, pattern: displayTextPattern(), description: 'no control or bidirectional-override characters' }),
    ),
    logoUrl: Type.Optional(LogoUrl),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    locale: Type.Optional(Type.String({ minLength: 2, maxLength: 35 })),
    currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
    electricityPrice: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1_000_000,
        description: "per kWh: while the site has no electricity tariff of its own, it becomes the tariff from today (today's costs restated)",
      }),
    ),
    carbonFactor: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    refreshIntervalSec: Type.Optional(Type.Integer({ minimum: 5, maximum: 3600 })),
    floorAreaM2: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 1e8 }), Type.Null()], { description: 'm²; null clears it' })),
  },
  { additionalProperties: false, minProperties: 1, description: 'Partial update: omitted fields keep their value.' },
);
export type PlatformConfigPatch = Static<typeof PlatformConfigUpdate>;

export const CameraPreset = Type.Object({ position: Vec3, target: Vec3, fov: Type.Number({ exclusiveMinimum: 0, maximum: 179, description: 'degrees' }) });

export const Hotspot = Type.Object({
  id: ItemId,
  name: Type.String({ minLength: 1, maxLength: 100 }),
  position: Vec3,
  pointCode: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'IoT point whose value the hotspot shows' })),
  area: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'energy area name' })),
});

export const SceneLabel = Type.Object({ id: ItemId, text: Type.String({ minLength: 1, maxLength: 200 }), position: Vec3 });

export const ThreeDConfig = Type.Object({
  cameraPreset: CameraPreset,
  ambientIntensity: Type.Number(),
  hotspots: Type.Array(Hotspot),
  labels: Type.Array(SceneLabel),
  modelFileId: Type.Union([Type.Integer(), Type.Null()], { description: 'a model file id (/api/models)' }),
  modelUrl: Type.Union([Type.String(), Type.Null()], { description: 'where the public portal loads the model from; null without a model' }),
  updatedAt: Timestamp,
});
export type ThreeDConfigView = Static<typeof ThreeDConfig>;

export const ThreeDConfigUpdate = Type.Object(
  {
    cameraPreset: Type.Optional(CameraPreset),
    ambientIntensity: Type.Optional(Type.Number({ minimum: 0, maximum: 10 })),
    hotspots: Type.Optional(Type.Array(Hotspot, { maxItems: 500 })),
    labels: Type.Optional(Type.Array(SceneLabel, { maxItems: 500 })),
    modelFileId: Type.Optional(Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1, description: 'a model file id, or null for no model' })),
  },
  { additionalProperties: false, minProperties: 1, description: 'Partial update: omitted fields keep their value; a list given replaces the whole list.' },
);
export type ThreeDConfigPatch = Static<typeof ThreeDConfigUpdate>;

export const TestMailBody = Type.Object({ to: Type.Optional(Email) }, { description: 'to: where the test goes; default your own email' });

export const TestMailOutcome = Type.Object({
  to: Type.String(),
  smtpConfigured: Type.Boolean({ description: 'EMS_SMTP_URL is set' }),
  delivery: Type.Union([Type.Literal('sent'), Type.Literal('logged'), Type.Literal('failed')]),
  error: Type.Union([Type.String(), Type.Null()], { description: "the mail server's answer when delivery is failed" }),
});
export type TestMailOutcome = Static<typeof TestMailOutcome>;

export const MailState = Type.Object({ smtpConfigured: Type.Boolean({ description: 'EMS_SMTP_URL is set' }) });
