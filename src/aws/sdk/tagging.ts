/**
 * The Resource Groups Tagging API's client class and the one command bulk tag reads send, the
 * target of the dynamic imports in ../service.ts and ../tag-sweep.ts: loaded only when
 * `--bulk-tag-reads` is in use.
 */
export {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
} from "@aws-sdk/client-resource-groups-tagging-api";
