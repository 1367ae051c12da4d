// The slice of unzipper's API we use (the package ships no types).
declare module "unzipper" {
  import type { Readable } from "node:stream";
  export interface CentralDirectoryFile {
    path: string;
    type: "File" | "Directory";
    uncompressedSize: number;
    stream(password?: string): Readable;
  }
  export interface CentralDirectory {
    files: CentralDirectoryFile[];
  }
  export const Open: { buffer(data: Buffer): Promise<CentralDirectory> };
  const unzipper: { Open: typeof Open };
  export default unzipper;
}
