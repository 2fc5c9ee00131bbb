// The few Electron APIs main.ts uses. The `electron` package is not a dependency: its installer wants to
// download a binary (impossible here) and it brings @types/node 22 into a Node 20 workspace. Add
// `electron` (with ELECTRON_SKIP_BINARY_DOWNLOAD=1 where the binary cannot download) and delete this
// file to typecheck against the real declarations.
declare module 'electron' {
  interface Event {
    preventDefault(): void;
  }
  interface WebContents {
    on(event: 'will-navigate', listener: (event: Event, url: string) => void): this;
    on(event: 'render-process-gone', listener: () => void): this;
    setWindowOpenHandler(handler: () => { action: 'deny' }): void;
  }
  export class BrowserWindow {
    constructor(options: {
      kiosk?: boolean;
      fullscreen?: boolean;
      autoHideMenuBar?: boolean;
      webPreferences?: {
        preload?: string;
        contextIsolation?: boolean;
        sandbox?: boolean;
        nodeIntegration?: boolean;
      };
    });
    webContents: WebContents;
    loadURL(url: string): Promise<void>;
  }
  export const app: {
    readonly isPackaged: boolean;
    getPath(name: 'userData'): string;
    whenReady(): Promise<void>;
    on(event: 'before-quit', listener: () => void): void;
  };
  export const session: {
    defaultSession: {
      setPermissionRequestHandler(
        handler: (
          contents: WebContents,
          permission: string,
          callback: (granted: boolean) => void,
          details: unknown,
        ) => void,
      ): void;
      setPermissionCheckHandler(handler: (contents: WebContents | null, permission: string) => boolean): void;
    };
  };
}
