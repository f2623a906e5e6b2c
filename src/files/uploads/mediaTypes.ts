// Media types: what a client claims is only data; what we send is from an allow-list; images are sniffed from magic bytes.

const TYPE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** The client's Content-Type, parameters dropped, lower-cased; anything malformed becomes application/octet-stream. */
export function cleanClaimedType(claimed: string | null | undefined): string {
  const type = String(claimed ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  return TYPE_PATTERN.test(type) ? type : 'application/octet-stream';
}

/**
 * Types a download may be labelled with. Everything else (HTML, SVG, XML, scripts, unknown) goes out as
 * application/octet-stream, so an uploaded page can never run in the service's origin, whatever its claim.
 */
export const SERVABLE_TYPES: ReadonlySet<string> = new Set([
  'application/gzip',
  'application/json',
  'application/pdf',
  'application/vnd.autodesk.fbx',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/zip',
  'audio/mpeg',
  'audio/ogg',
  'audio/wav',
  'image/avif',
  'image/bmp',
  'image/gif',
  'image/jpeg',
  'image/png',
  'image/tiff',
  'image/webp',
  'model/gltf+json',
  'model/gltf-binary',
  'model/obj',
  'model/stl',
  'text/csv',
  'text/plain',
  'video/mp4',
  'video/webm',
]);

export function servedType(stored: string): string {
  return SERVABLE_TYPES.has(stored) ? stored : 'application/octet-stream';
}

/** 3D model formats accepted by /api/models, by extension; the stored name keeps the extension so /static/models can type it. */
export const MODEL_TYPES: Readonly<Record<string, string>> = {
  '.glb': 'model/gltf-binary',
  '.gltf': 'model/gltf+json',
  '.fbx': 'application/vnd.autodesk.fbx',
  '.obj': 'model/obj',
  '.stl': 'model/stl',
};

export type ImageType = 'image/png' | 'image/jpeg' | 'image/webp';

export const IMAGE_EXTENSIONS: Readonly<Record<ImageType, string>> = { 'image/png': '.png', 'image/jpeg': '.jpg', 'image/webp': '.webp' };

/** Bytes a sniff needs from the start of a file. */
export const SNIFF_BYTES = 12;

/** The image type the first bytes prove, or null: PNG signature, JPEG SOI + marker, RIFF....WEBP. */
export function sniffImage(head: Uint8Array): ImageType | null {
  const at = (offset: number, bytes: number[]) => bytes.every((byte, i) => head[offset + i] === byte);
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (at(0, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (at(0, [0x52, 0x49, 0x46, 0x46]) && at(8, [0x57, 0x45, 0x42, 0x50])) return 'image/webp';
  return null;
}
