// node-webcam@0.8.2 ships no types: the part the camera uses.
declare module 'node-webcam' {
  export interface WebcamOptions {
    width?: number;
    height?: number;
    quality?: number;
    output?: 'jpeg' | 'png';
    device?: string | false;
    callbackReturn?: 'location' | 'buffer' | 'base64';
    verbose?: boolean;
    skip?: number;
  }
  export interface Webcam {
    capture(location: string, callback: (error: Error | null, data: Buffer) => void): void;
  }
  const NodeWebcam: { create(options: WebcamOptions): Webcam };
  export default NodeWebcam;
}
