// Schemas of /api/models: 3D model files for the facility scene, also served publicly under /static/models/.
import { Type, type Static } from '@sinclair/typebox';
import { Page } from '../../platform/http/schemas.ts';
import { storedFileFields } from '../uploads/schemas.ts';

export const ModelView = Type.Object({
  ...storedFileFields,
  url: Type.String({ description: 'Public URL of the model for 3D viewers: /static/models/<storedName>, no token needed' }),
});
export type ModelView = Static<typeof ModelView>;
export const ModelPage = Page(ModelView);
