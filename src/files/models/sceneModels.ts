// The model files as the site's 3D scene names them (the port SceneModels site declares: site does not import files,
// the root hands this in): a model's stored name by id, to build the scene's model URL and to check a model exists.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { modelFiles } from '../../platform/db/schema/index.ts';

/** A model's stored name by id, or undefined when there is no such model; prepared once. */
export function sceneModels(db: Db): { storedName(modelId: number): string | undefined } {
  const byId = db.orm
    .select({ storedName: modelFiles.storedName })
    .from(modelFiles)
    .where(eq(modelFiles.id, sql.placeholder('id')))
    .prepare();
  return { storedName: (id) => byId.get({ id })?.storedName };
}
