/** A blob's git id, computed here (undo's shadow repository compares content without a process). */
import { createHash } from "node:crypto";

/**
 * git's id of content as a blob (`git hash-object`), in the repository's hash, which its ids'
 * length says (SHA-1 unless 64).
 */
export const blobId = (bytes: Buffer, idLength = 40) =>
  createHash(idLength === 64 ? "sha256" : "sha1")
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest("hex");
