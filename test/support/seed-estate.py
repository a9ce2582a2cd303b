"""Seeds the test AWS with an estate made outside the operator, with boto3, for the export tests.

    seed-estate.py ENDPOINT BUCKETS QUEUES INSTANCES [PREFIX] [--workers N]

Buckets, queues and instances with varied settings: tags, versioning, encryption, lifecycle
rules, CORS and Block Public Access on buckets; visibility timeouts, delays, retention, FIFO
queues, dead-letter queues (one of them outside the estate: a queue of another name prefix, and
some another object owns); instances with tags. Every tenth bucket and queue
carries the ownership tags of an object (another cluster's), which an export must skip. Prints
what it made as JSON on standard output.

--workers: how many resources are seeded at once (default 1). The estate is the same for any
number: buckets, then queues, then the queues' dead-letter queues, then instances, each step
done before the next starts, and the JSON lists each kind in the order of its numbers.
"""

import argparse
import json
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config

parser = argparse.ArgumentParser(description="Seeds the test AWS with an estate made outside the operator.")
parser.add_argument("endpoint")
parser.add_argument("buckets", type=int)
parser.add_argument("queues", type=int)
parser.add_argument("instances", type=int)
parser.add_argument("prefix", nargs="?", default="estate")
parser.add_argument("--workers", type=int, default=1)
args = parser.parse_args()
ENDPOINT, BUCKETS, QUEUES, INSTANCES, PREFIX = args.endpoint, args.buckets, args.queues, args.instances, args.prefix
WORKERS = max(1, args.workers)
REGION = "us-east-1"
AMI = "ami-1e749f67"
OWNED = {
    "compute.cloud.com/managed-by": "kubeprovisioner",
    "compute.cloud.com/uid": "0f4c8a4e-0000-4000-8000-000000000001",
    "compute.cloud.com/namespace": "elsewhere",
    "compute.cloud.com/kind": "S3Bucket",
}


def client(service):
    # boto3's clients are safe to share between threads; the pool holds a connection per worker.
    return boto3.client(
        service,
        region_name=REGION,
        endpoint_url=ENDPOINT,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(max_pool_connections=max(10, WORKERS)),
    )


s3, sqs, ec2 = client("s3"), client("sqs"), client("ec2")
made = {"buckets": [], "queues": [], "instances": [], "foreign": [], "outside": []}


def seed_bucket(i):
    """Bucket i with its settings; its name, and whether it is foreign-owned."""
    name = f"{PREFIX}-bucket-{i:03d}"
    s3.create_bucket(Bucket=name)
    tags = {"team": f"t{i % 4}", "estate": PREFIX}
    foreign = i % 10 == 9
    if foreign:
        tags.update({**OWNED, "compute.cloud.com/name": f"b{i}"})
    s3.put_bucket_tagging(Bucket=name, Tagging={"TagSet": [{"Key": k, "Value": v} for k, v in tags.items()]})
    if i % 2 == 0:
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    if i % 3 == 0:
        s3.put_bucket_encryption(
            Bucket=name,
            ServerSideEncryptionConfiguration={
                "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}, "BucketKeyEnabled": False}]
            },
        )
    if i % 4 == 1:
        s3.put_bucket_lifecycle_configuration(
            Bucket=name,
            LifecycleConfiguration={
                "Rules": [{"ID": "expire", "Status": "Enabled", "Filter": {"Prefix": "tmp/"}, "Expiration": {"Days": 7}}]
            },
        )
    if i % 5 == 2:
        s3.put_bucket_cors(
            Bucket=name,
            CORSConfiguration={"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["https://example.com"]}]},
        )
    if i % 6 == 3:
        s3.put_public_access_block(
            Bucket=name,
            PublicAccessBlockConfiguration={
                "BlockPublicAcls": True,
                "IgnorePublicAcls": True,
                "BlockPublicPolicy": True,
                "RestrictPublicBuckets": True,
            },
        )
    return name, foreign


def create_queue(i):
    """Queue i with its attributes and tags; its name, URL, ARN, whether it is FIFO and whether foreign-owned."""
    fifo = i % 7 == 6
    name = f"{PREFIX}-queue-{i:03d}" + (".fifo" if fifo else "")
    attributes = {"VisibilityTimeout": str(30 + i % 5), "MessageRetentionPeriod": str(86400 + 60 * (i % 3))}
    if i % 3 == 1:
        attributes["DelaySeconds"] = "5"
    if fifo:
        attributes.update({"FifoQueue": "true", "ContentBasedDeduplication": "true"})
    tags = {"team": f"t{i % 4}", "estate": PREFIX}
    foreign = i % 10 == 9
    if foreign:
        tags.update({**OWNED, "compute.cloud.com/kind": "SqsQueue", "compute.cloud.com/name": f"q{i}"})
    url = sqs.create_queue(QueueName=name, Attributes=attributes, tags=tags)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return {"name": name, "url": url, "arn": arn, "fifo": fifo, "foreign": foreign}


with ThreadPoolExecutor(max_workers=WORKERS) as pool:
    for name, foreign in pool.map(seed_bucket, range(BUCKETS)):
        (made["foreign"] if foreign else made["buckets"]).append(name)

    outside = sqs.create_queue(QueueName=f"outside-{PREFIX}-dlq")["QueueUrl"]
    outside_arn = sqs.get_queue_attributes(QueueUrl=outside, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    made["outside"].append(outside)
    queues = list(pool.map(create_queue, range(QUEUES)))
    for q in queues:
        (made["foreign"] if q["foreign"] else made["queues"]).append(q["name"])

    def redrive(i):
        """A standard queue's dead-letter queue: the queue before it (in the estate, or another object's), or one outside it."""
        q = queues[i]
        if q["fifo"]:
            return
        before = queues[i - 1] if i > 0 else None
        if i % 4 == 3 and before is not None and not before["fifo"]:
            sqs.set_queue_attributes(
                QueueUrl=q["url"],
                Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": before["arn"], "maxReceiveCount": "5"})},
            )
        if i % 10 == 0 and before is not None and before["foreign"] and not before["fifo"]:
            # Another object's queue as the dead-letter queue: the export names it by ARN.
            sqs.set_queue_attributes(
                QueueUrl=q["url"],
                Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": before["arn"], "maxReceiveCount": "4"})},
            )
        if i % 8 == 5:
            sqs.set_queue_attributes(
                QueueUrl=q["url"],
                Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": outside_arn, "maxReceiveCount": "3"})},
            )

    list(pool.map(redrive, range(QUEUES)))

    if INSTANCES > 0:
        out = ec2.run_instances(ImageId=AMI, InstanceType="t3.micro", MinCount=INSTANCES, MaxCount=INSTANCES)

        def tag_instance(n_inst):
            n, inst = n_inst
            ec2.create_tags(
                Resources=[inst["InstanceId"]],
                Tags=[{"Key": "Name", "Value": f"{PREFIX}-web-{n:02d}"}, {"Key": "estate", "Value": PREFIX}],
            )
            return inst["InstanceId"]

        made["instances"].extend(pool.map(tag_instance, enumerate(out["Instances"])))

print(json.dumps(made))
