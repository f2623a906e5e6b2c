// The face of files/: what the other contexts use of it. Imports from outside files/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is files's own business.
export { createModelStore, type SceneModelRef } from './models/service.ts';
export { sceneModels } from './models/sceneModels.ts';
export { staticModels } from './models/staticModels.ts';
export { createFileStore } from './service.ts';
export { AVATAR_MAX_BYTES, AvatarStore, type AvatarColumns } from './uploads/avatarStore.ts';
export { sweepStaleUploads, withUpload } from './uploads/receiveUpload.ts';
export { BinaryBody } from './uploads/schemas.ts';
export { sendStoredFile } from './uploads/sendFile.ts';
export type { StoredFiles } from './uploads/storedFiles.ts';
export { buildFiles, filesRouteGroups, type Files } from './module.ts';
