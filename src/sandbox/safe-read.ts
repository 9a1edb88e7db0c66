/**
 * The sandbox's reading of files a command may have made goes through keel's one file door
 * (`files/door.ts`): never blocking on a FIFO or device, bounded, a kernel file never read.
 */
export { isSmallFile, lstatOf, readSmall } from "../files/door.js";
