// What emsctl uses of files/: the model files the site's scene names (the port SceneModels of site's ConfigStore). A
// face beside index.ts, for emsctl only, loaded lazily without the upload routes (docs/development.md).
export { sceneModels } from './models/sceneModels.ts';
