/** Where the Electron binary is, or why there is none. */
export function electronBinary(): { bin: string; why?: undefined } | { why: string; bin?: undefined };
