// The kiosk page needs nothing from Node: the preload exposes no API (contextIsolation and the sandbox
// stay whole). It exists so the window's preload is explicit rather than a default.
