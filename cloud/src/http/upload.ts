// The one file of a multipart/form-data request (field `file`), read into memory up to a size limit.
// Spreadsheet imports (guests, persons) read their upload here; what the bytes mean is theirs to say.
import busboy from 'busboy';
import type { Request } from 'express';
import { AppError, invalidFields } from './errors.js';

export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;

export interface UploadedFile {
  filename: string;
  mimeType: string;
  data: Buffer;
}

export const isMultipart = (req: Request) => Boolean(req.is('multipart/form-data'));

/** Reads the file field `file`, refusing anything larger than `UPLOAD_MAX_BYTES` (413) or not multipart (415). */
export function readUpload(req: Request): Promise<UploadedFile> {
  if (!isMultipart(req)) {
    return Promise.reject(
      new AppError(
        415,
        'unsupported_media_type',
        'Send the spreadsheet as multipart/form-data, field `file`',
      ),
    );
  }
  return new Promise((resolve, reject) => {
    let upload: UploadedFile | null = null;
    let failure: AppError | null = null;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: UPLOAD_MAX_BYTES, fields: 10 } });
    } catch {
      reject(new AppError(400, 'validation_failed', 'The multipart body has no usable boundary'));
      return;
    }
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      // A body that ends inside the file destroys the file stream with an error of its own.
      stream.on('error', () => {
        failure ??= new AppError(400, 'validation_failed', 'The multipart body is malformed');
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => {
        failure = new AppError(413, 'payload_too_large', `The file is larger than ${UPLOAD_MAX_BYTES} bytes`);
      });
      stream.on('end', () => {
        if (field === 'file' && !upload) {
          upload = { filename: info.filename ?? '', mimeType: info.mimeType, data: Buffer.concat(chunks) };
        }
      });
    });
    parser.on('error', () =>
      reject(new AppError(400, 'validation_failed', 'The multipart body is malformed')),
    );
    parser.on('close', () => {
      if (failure) reject(failure);
      else if (!upload)
        reject(invalidFields([{ path: 'body.file', message: 'a file field named `file` is required' }]));
      else resolve(upload);
    });
    req.pipe(parser);
  });
}
