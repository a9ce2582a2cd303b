/**
 * EC2's SDK client class alone, the target of the dynamic import in ../service.ts: importing the
 * package itself there would keep every export of it (each command and its schema) in the bundle.
 */
export { EC2Client } from "@aws-sdk/client-ec2";
