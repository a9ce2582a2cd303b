/**
 * Root device names of AMIs, looked up with DescribeImages when a spec sizes the root volume
 * without naming its device. An AMI's root device never changes, so answers are cached per
 * region and AMI for the life of the process (bounded; the oldest entries go first).
 */
import type { DescribeImagesCommandInput, DescribeImagesCommandOutput } from "@aws-sdk/client-ec2";
import { InvalidSpecError } from "../common/driver.ts";

/** Sends DescribeImages in `region`. */
export type DescribeImages = (
  region: string,
  input: DescribeImagesCommandInput,
  signal: AbortSignal | undefined,
) => Promise<Pick<DescribeImagesCommandOutput, "Images">>;

/** Cached AMI root device names. */
export class AmiRootDevices {
  readonly #describe: DescribeImages;
  readonly #max: number;
  readonly #names = new Map<string, string>();

  /** `maxEntries` bounds the cache. @default 1024 */
  constructor(describe: DescribeImages, maxEntries = 1024) {
    this.#describe = describe;
    this.#max = maxEntries;
  }

  /**
   * The root device name of `amiId` in `region`.
   * @throws AwsError from DescribeImages (`InvalidAMIID.NotFound` is terminal).
   * @throws InvalidSpecError when the AMI has no root device name (not an EBS-backed image).
   */
  async get(region: string, amiId: string, signal?: AbortSignal): Promise<string> {
    const key = `${region}/${amiId}`;
    const cached = this.#names.get(key);
    if (cached !== undefined) return cached;
    const out = await this.#describe(region, { ImageIds: [amiId] }, signal);
    const image = out.Images?.find((i) => i.ImageId === amiId) ?? out.Images?.[0];
    const name = image?.RootDeviceName;
    if (name === undefined || name === "") {
      throw new InvalidSpecError(
        "AmiRootDeviceUnknown",
        `EC2 reports no root device name for AMI ${amiId}; set spec.storage.rootVolume.deviceName`,
      );
    }
    if (this.#names.size >= this.#max) {
      const oldest = this.#names.keys().next();
      if (oldest.done !== true) this.#names.delete(oldest.value);
    }
    this.#names.set(key, name);
    return name;
  }
}
