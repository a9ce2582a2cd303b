/**
 * The Resource Groups Tagging API client, loaded only when bulk tag reads are in use: its SDK
 * module is imported on the first {@link loadTaggingSdk}, and the client factory
 * (./clients.ts, through the `tagging` entry of ./service.ts) builds clients from it afterwards
 * like every other service's, with the same timeouts, retries, rate budget and metrics.
 */
import type * as TaggingSdk from "@aws-sdk/client-resource-groups-tagging-api";
import type { BaseClientConfig } from "./service.ts";

/** The SDK module of the Resource Groups Tagging API. */
export type TaggingModule = typeof TaggingSdk;

let loaded: TaggingModule | undefined;
let loading: Promise<TaggingModule> | undefined;

/** Imports the SDK module once; later calls resolve with the same module. */
export function loadTaggingSdk(): Promise<TaggingModule> {
  if (loaded !== undefined) return Promise.resolve(loaded);
  loading ??= import("@aws-sdk/client-resource-groups-tagging-api").then((m) => (loaded = m));
  return loading;
}

/**
 * A client built from the loaded module.
 * @throws Error when {@link loadTaggingSdk} has not resolved yet: a caller loads it first.
 */
export function buildTaggingClient(config: BaseClientConfig): TaggingSdk.ResourceGroupsTaggingAPIClient {
  if (loaded === undefined)
    throw new Error("the Resource Groups Tagging API client is used before loadTaggingSdk() resolved");
  return new loaded.ResourceGroupsTaggingAPIClient(config);
}
