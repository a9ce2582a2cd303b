"""Seeds the test AWS with an estate made outside the operator, with boto3, for the export tests.

    seed-estate.py ENDPOINT BUCKETS QUEUES INSTANCES [PREFIX]

Buckets, queues and instances with varied settings: tags, versioning, encryption, lifecycle
rules, CORS and Block Public Access on buckets; visibility timeouts, delays, retention, FIFO
queues, dead-letter queues (one of them outside the estate: a queue of another name prefix) and
redrive allow policies on queues; instances of two types with tags. Every tenth bucket and queue
carries the ownership tags of an object (another cluster's), which an export must skip. Prints
what it made as JSON on standard output.
"""

import json
import sys

import boto3

ENDPOINT, BUCKETS, QUEUES, INSTANCES = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
PREFIX = sys.argv[5] if len(sys.argv) > 5 else "estate"
REGION = "us-east-1"
AMI = "ami-1e749f67"
OWNED = {
    "compute.cloud.com/managed-by": "kubeprovisioner",
    "compute.cloud.com/uid": "0f4c8a4e-0000-4000-8000-000000000001",
    "compute.cloud.com/namespace": "elsewhere",
    "compute.cloud.com/kind": "S3Bucket",
}


def client(service):
    return boto3.client(
        service,
        region_name=REGION,
        endpoint_url=ENDPOINT,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


s3, sqs, ec2 = client("s3"), client("sqs"), client("ec2")
made = {"buckets": [], "queues": [], "instances": [], "foreign": [], "outside": []}

for i in range(BUCKETS):
    name = f"{PREFIX}-bucket-{i:03d}"
    s3.create_bucket(Bucket=name)
    tags = {"team": f"t{i % 4}", "estate": PREFIX}
    if i % 10 == 9:
        tags.update({**OWNED, "compute.cloud.com/name": f"b{i}"})
        made["foreign"].append(name)
    else:
        made["buckets"].append(name)
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

outside = sqs.create_queue(QueueName=f"outside-{PREFIX}-dlq")["QueueUrl"]
made["outside"].append(outside)
arns = {}
for i in range(QUEUES):
    fifo = i % 7 == 6
    name = f"{PREFIX}-queue-{i:03d}" + (".fifo" if fifo else "")
    attributes = {"VisibilityTimeout": str(30 + i % 5), "MessageRetentionPeriod": str(86400 + 60 * (i % 3))}
    if i % 3 == 1:
        attributes["DelaySeconds"] = "5"
    if fifo:
        attributes.update({"FifoQueue": "true", "ContentBasedDeduplication": "true"})
    tags = {"team": f"t{i % 4}", "estate": PREFIX}
    if i % 10 == 9:
        tags.update({**OWNED, "compute.cloud.com/kind": "SqsQueue", "compute.cloud.com/name": f"q{i}"})
    url = sqs.create_queue(QueueName=name, Attributes=attributes, tags=tags)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    arns[i] = (arn, fifo)
    (made["foreign"] if i % 10 == 9 else made["queues"]).append(name)
    # A standard queue's dead-letter queue: the queue before it (in the estate), or one outside it.
    if not fifo and i % 4 == 3 and i - 1 in arns and not arns[i - 1][1]:
        target = arns[i - 1][0]
        sqs.set_queue_attributes(
            QueueUrl=url,
            Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": target, "maxReceiveCount": "5"})},
        )
    if not fifo and i % 8 == 5:
        out_arn = sqs.get_queue_attributes(QueueUrl=outside, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sqs.set_queue_attributes(
            QueueUrl=url,
            Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": out_arn, "maxReceiveCount": "3"})},
        )

if INSTANCES > 0:
    out = ec2.run_instances(ImageId=AMI, InstanceType="t3.micro", MinCount=INSTANCES, MaxCount=INSTANCES)
    for n, inst in enumerate(out["Instances"]):
        ec2.create_tags(
            Resources=[inst["InstanceId"]],
            Tags=[{"Key": "Name", "Value": f"{PREFIX}-web-{n:02d}"}, {"Key": "estate", "Value": PREFIX}],
        )
        made["instances"].append(inst["InstanceId"])

print(json.dumps(made))
