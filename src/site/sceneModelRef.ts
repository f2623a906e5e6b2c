// The scene's reference to a 3D model (three_d_config.model_file_id), cleared when the model is deleted: the port
// SceneModelRef files declares (files is built before site, which owns the scene's row; the root hands this in).
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { threeDConfig } from '../platform/db/schema/index.ts';

/** Clears a deleted model from the scene, in the caller's transaction (the column has no foreign key); prepared once. */
export function sceneModelRef(db: Db): { unlink(modelId: number): void } {
  // Not an edit of the scene: updated_at stays (drizzle's onUpdate default would be the time of preparing).
  const unlinkScene = db.orm
    .update(threeDConfig)
    .set({ modelFileId: null, updatedAt: sql`${threeDConfig.updatedAt}` })
    .where(eq(threeDConfig.modelFileId, sql.placeholder('id')))
    .prepare();
  return { unlink: (id) => void unlinkScene.run({ id }) };
}
