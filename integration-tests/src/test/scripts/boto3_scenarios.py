#!/usr/bin/python3
"""Query-protocol client scenarios for Sluice, driven by Debian's python3-boto3.

Debian boto3 1.26.27 / botocore 1.29.27 speaks the SQS *Query* protocol (form-encoded
requests, XML responses), so these scenarios exercise the server's Query codec end to end.

Environment:
  SLUICE_ENDPOINT        e.g. http://127.0.0.1:9324
  AWS_ACCESS_KEY_ID      access key configured on the server
  AWS_SECRET_ACCESS_KEY  secret key configured on the server
  AWS_DEFAULT_REGION     optional, default us-east-1

Run with /usr/bin/python3 (the interpreter that has the Debian boto3). Prints one
"PASS <name>" / "FAIL <name>" line per scenario and, last, "N passed, M failed".
Exit status 0 only when every scenario passed.

Note: botocore 1.29 does NOT verify SQS MD5 digests itself (unlike the Java SDK), so the
scenarios recompute MD5OfMessageBody / MD5OfMessageAttributes (spec section 6) and compare.
"""

import hashlib
import json
import os
import struct
import sys
import threading
import time
import traceback
import uuid

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ.get("SLUICE_ENDPOINT", "http://127.0.0.1:9324")
REGION = os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
RUN_ID = uuid.uuid4().hex[:8]


# --------------------------------------------------------------------------- helpers

def make_client(validate=True):
    cfg = Config(
        region_name=REGION,
        # Surface server errors directly; a retried 5xx would hide a server bug.
        retries={"total_max_attempts": 1, "mode": "standard"},
        connect_timeout=5,
        read_timeout=40,  # > longest long poll (20 s)
        parameter_validation=validate,
    )
    return boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
        config=cfg,
    )


def qname(tag, fifo=False):
    name = "it-boto3-%s-%s-%s" % (RUN_ID, tag, uuid.uuid4().hex[:6])
    return name + ".fifo" if fifo else name


class QueueTracker:
    """Creates queues and deletes whatever is left of them at the end of a scenario."""

    def __init__(self, client):
        self.client = client
        self.urls = []

    def create(self, name, attributes=None, tags=None):
        kwargs = {"QueueName": name}
        if attributes:
            kwargs["Attributes"] = attributes
        if tags:
            kwargs["tags"] = tags
        url = self.client.create_queue(**kwargs)["QueueUrl"]
        self.urls.append(url)
        return url

    def cleanup(self):
        for url in reversed(self.urls):
            try:
                self.client.delete_queue(QueueUrl=url)
            except Exception:  # already deleted or server trouble: not this scenario's verdict
                pass


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def eq(actual, expected, what):
    if actual != expected:
        raise AssertionError("%s: expected %r, got %r" % (what, expected, actual))


def expect_error(code, fn, *args, http_status=None, **kwargs):
    """Call fn, require a ClientError with Error.Code == code; return the ClientError."""
    try:
        resp = fn(*args, **kwargs)
    except ClientError as e:
        got = e.response.get("Error", {}).get("Code")
        eq(got, code, "error code of %s" % fn.__name__)
        if http_status is not None:
            eq(e.response.get("ResponseMetadata", {}).get("HTTPStatusCode"), http_status,
               "HTTP status of %s error %s" % (fn.__name__, code))
        return e
    raise AssertionError("%s should have failed with %s but returned %r" % (fn.__name__, code, resp))


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def md5_of_message_attributes(attrs):
    """Spec section 6: sorted names; len||name, len||type, 1|2, len||value (big-endian u32)."""
    buf = bytearray()

    def put(b):
        buf.extend(struct.pack(">I", len(b)))
        buf.extend(b)

    for name in sorted(attrs):
        a = attrs[name]
        put(name.encode("utf-8"))
        put(a["DataType"].encode("utf-8"))
        if "StringValue" in a:
            buf.append(1)
            put(a["StringValue"].encode("utf-8"))
        else:
            buf.append(2)
            put(bytes(a["BinaryValue"]))
    return md5_hex(bytes(buf))


def verify_received_md5s(msg):
    eq(msg.get("MD5OfBody"), md5_hex(msg["Body"].encode("utf-8")),
       "MD5OfBody of message %s" % msg.get("MessageId"))
    if msg.get("MessageAttributes"):
        eq(msg.get("MD5OfMessageAttributes"), md5_of_message_attributes(msg["MessageAttributes"]),
           "MD5OfMessageAttributes of message %s" % msg.get("MessageId"))


def receive_all(client, url, expected, timeout=5.0, **kwargs):
    """Receive until `expected` messages were collected or timeout elapsed."""
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < expected and time.monotonic() < deadline:
        resp = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, **kwargs)
        for m in resp.get("Messages", []):
            verify_received_md5s(m)
            got.append(m)
    return got


def queue_counts(client, url):
    attrs = client.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                        "ApproximateNumberOfMessagesDelayed"])["Attributes"]
    return (int(attrs["ApproximateNumberOfMessages"]),
            int(attrs["ApproximateNumberOfMessagesNotVisible"]),
            int(attrs["ApproximateNumberOfMessagesDelayed"]))


# --------------------------------------------------------------------------- scenarios

def scenario_queue_lifecycle(client, tracker):
    name = qname("life")
    tags = {"env": "it", "team": "sluice"}
    url = tracker.create(name, {"VisibilityTimeout": "45", "DelaySeconds": "2"}, tags)
    check(url.rstrip("/").endswith("/" + name), "CreateQueue URL %r should end with /%s" % (url, name))

    eq(client.get_queue_url(QueueName=name)["QueueUrl"], url, "GetQueueUrl")

    # Idempotent create with identical attributes returns the same URL.
    eq(client.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "45", "DelaySeconds": "2"})["QueueUrl"],
       url, "CreateQueue again with identical attributes")

    # A second queue outside the prefix must not be listed.
    other = tracker.create("it-boto3-other-%s" % uuid.uuid4().hex[:8])
    listed = client.list_queues(QueueNamePrefix=name).get("QueueUrls", [])
    check(url in listed, "ListQueues(prefix=%s) should include %s, got %r" % (name, url, listed))
    check(other not in listed, "ListQueues(prefix=%s) should not include %s" % (name, other))
    check(all(u.rstrip("/").split("/")[-1].startswith(name) for u in listed),
          "ListQueues(prefix) returned URLs not matching the prefix: %r" % listed)

    attrs = client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    expected_names = {
        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed",
        "ApproximateNumberOfMessagesNotVisible", "CreatedTimestamp", "DelaySeconds",
        "LastModifiedTimestamp", "MaximumMessageSize", "MessageRetentionPeriod", "QueueArn",
        "ReceiveMessageWaitTimeSeconds", "SqsManagedSseEnabled", "VisibilityTimeout",
    }
    missing = expected_names - set(attrs)
    check(not missing, "GetQueueAttributes(All) lacks %s; got %r" % (sorted(missing), attrs))
    for k, v in attrs.items():
        check(isinstance(v, str), "attribute %s should be a string, got %r" % (k, v))
    for fifo_only in ("FifoQueue", "ContentBasedDeduplication"):
        check(fifo_only not in attrs, "standard queue should not report %s (got %r)" % (fifo_only, attrs))
    eq(attrs["VisibilityTimeout"], "45", "VisibilityTimeout")
    eq(attrs["DelaySeconds"], "2", "DelaySeconds")
    eq(attrs["MaximumMessageSize"], "1048576", "default MaximumMessageSize")
    eq(attrs["MessageRetentionPeriod"], "345600", "default MessageRetentionPeriod")
    eq(attrs["QueueArn"], "arn:aws:sqs:%s:%s:%s" % (REGION, url.rstrip("/").split("/")[-2], name), "QueueArn")
    created = int(attrs["CreatedTimestamp"])
    check(abs(created - time.time()) < 300,
          "CreatedTimestamp should be epoch seconds close to now, got %s" % created)

    only = client.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    eq(only, {"VisibilityTimeout": "45"}, "GetQueueAttributes([VisibilityTimeout])")

    client.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "60", "DelaySeconds": "0"})
    attrs = client.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout", "DelaySeconds"])["Attributes"]
    eq(attrs, {"VisibilityTimeout": "60", "DelaySeconds": "0"}, "attributes after SetQueueAttributes")

    expect_error("InvalidAttributeName", client.get_queue_attributes, QueueUrl=url, AttributeNames=["NoSuchAttr"])

    eq(client.list_queue_tags(QueueUrl=url).get("Tags"), tags, "ListQueueTags after CreateQueue")
    client.tag_queue(QueueUrl=url, Tags={"team": "core", "extra": "x y"})
    eq(client.list_queue_tags(QueueUrl=url).get("Tags"), {"env": "it", "team": "core", "extra": "x y"},
       "ListQueueTags after TagQueue")
    client.untag_queue(QueueUrl=url, TagKeys=["env", "extra", "not-there"])
    eq(client.list_queue_tags(QueueUrl=url).get("Tags"), {"team": "core"}, "ListQueueTags after UntagQueue")
    client.untag_queue(QueueUrl=url, TagKeys=["team"])
    check(not client.list_queue_tags(QueueUrl=url).get("Tags"), "ListQueueTags should be empty after untagging all")

    client.delete_queue(QueueUrl=url)
    try:
        client.get_queue_url(QueueName=name)
        raise AssertionError("GetQueueUrl of deleted queue %s should fail" % name)
    except client.exceptions.QueueDoesNotExist as e:
        eq(e.response["Error"]["Code"], "AWS.SimpleQueueService.NonExistentQueue", "Error.Code")
        eq(e.response["ResponseMetadata"]["HTTPStatusCode"], 400, "HTTP status of NonExistentQueue")
    except ClientError as e:
        raise AssertionError("GetQueueUrl of deleted queue: botocore did not map the error to "
                             "QueueDoesNotExist; Error=%r" % (e.response.get("Error"),))
    listed = client.list_queues(QueueNamePrefix=name).get("QueueUrls", [])
    check(url not in listed, "deleted queue still listed: %r" % listed)
    expect_error("AWS.SimpleQueueService.NonExistentQueue", client.send_message, QueueUrl=url, MessageBody="x")


def scenario_send_receive_delete(client, tracker):
    url = tracker.create(qname("msg"))
    body = ("line1\r\nline2\nline3\r\ttab  CR-alone\r end; unicode: h\u00e9llo \u2713 \u4e2d\u6587 "
            "\U0001F600 \U0001D11E; xml: <tag attr=\"v\">&amp; & < > \" ' ]]> </tag>")
    mattrs = {
        "str": {"DataType": "String", "StringValue": "v <&>\"' \u00e9\r\n"},
        "num": {"DataType": "Number", "StringValue": "-12.5e3"},
        "bin": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xff binary"},
        "custom.label": {"DataType": "String.json", "StringValue": "{\"a\":1}"},
    }
    sent = client.send_message(QueueUrl=url, MessageBody=body, MessageAttributes=mattrs)
    mid = sent["MessageId"]
    check(len(mid) == 36, "MessageId should be a UUID, got %r" % mid)
    eq(sent.get("MD5OfMessageBody"), md5_hex(body.encode("utf-8")), "SendMessage MD5OfMessageBody")
    eq(sent.get("MD5OfMessageAttributes"), md5_of_message_attributes(mattrs), "SendMessage MD5OfMessageAttributes")
    check("SequenceNumber" not in sent, "standard queue SendMessage should not return SequenceNumber")

    # A send without attributes must not carry MD5OfMessageAttributes.
    plain = client.send_message(QueueUrl=url, MessageBody="plain")
    check("MD5OfMessageAttributes" not in plain, "MD5OfMessageAttributes present without attributes: %r" % plain)

    msgs = receive_all(client, url, 2, AttributeNames=["All"], MessageAttributeNames=["All"])
    eq(len(msgs), 2, "number of received messages")
    by_id = {m["MessageId"]: m for m in msgs}
    check(mid in by_id, "sent MessageId %s not received (got %r)" % (mid, list(by_id)))
    m = by_id[mid]
    eq(m["Body"], body, "received body (exact round trip incl. \\r\\n, unicode, XML specials)")
    got_attrs = m.get("MessageAttributes", {})
    eq(set(got_attrs), set(mattrs), "received message attribute names")
    for k, a in mattrs.items():
        g = got_attrs[k]
        eq(g.get("DataType"), a["DataType"], "DataType of attribute %s" % k)
        if "StringValue" in a:
            eq(g.get("StringValue"), a["StringValue"], "StringValue of attribute %s" % k)
        else:
            eq(g.get("BinaryValue"), a["BinaryValue"], "BinaryValue of attribute %s" % k)
    eq(m.get("MD5OfMessageAttributes"), md5_of_message_attributes(mattrs), "received MD5OfMessageAttributes")
    sysattrs = m.get("Attributes", {})
    for k in ("SentTimestamp", "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp", "SenderId"):
        check(k in sysattrs, "system attribute %s missing with AttributeNames=[All]: %r" % (k, sysattrs))
    eq(sysattrs["ApproximateReceiveCount"], "1", "ApproximateReceiveCount")
    sent_ts = int(sysattrs["SentTimestamp"])
    check(abs(sent_ts / 1000.0 - time.time()) < 300, "SentTimestamp should be epoch ms near now, got %s" % sent_ts)
    check(int(sysattrs["ApproximateFirstReceiveTimestamp"]) >= sent_ts,
          "ApproximateFirstReceiveTimestamp < SentTimestamp: %r" % sysattrs)
    check("DeadLetterQueueSourceArn" not in sysattrs and "SequenceNumber" not in sysattrs,
          "inapplicable system attributes returned: %r" % sysattrs)

    other = by_id[plain["MessageId"]]
    eq(other["Body"], "plain", "second body")
    check(not other.get("MessageAttributes") and "MD5OfMessageAttributes" not in other,
          "message without attributes should have no MessageAttributes/MD5OfMessageAttributes: %r" % other)

    for x in msgs:
        client.delete_message(QueueUrl=url, ReceiptHandle=x["ReceiptHandle"])
    # Deleting again with the same (well-formed) handle succeeds on standard queues.
    client.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    expect_error("ReceiptHandleIsInvalid", client.delete_message, QueueUrl=url,
                 ReceiptHandle="definitely-not-a-receipt-handle", http_status=404)

    # Attribute selection by exact name and by prefix; system attribute selection by name.
    sent2 = client.send_message(QueueUrl=url, MessageBody="sel", MessageAttributes=mattrs)
    r = client.receive_message(QueueUrl=url, WaitTimeSeconds=2, VisibilityTimeout=0,
                               AttributeNames=["SentTimestamp"], MessageAttributeNames=["num", "custom.*"])
    msgs2 = r.get("Messages", [])
    eq(len(msgs2), 1, "receive of selection message")
    eq(msgs2[0]["MessageId"], sent2["MessageId"], "selection message id")
    eq(set(msgs2[0].get("MessageAttributes", {})), {"num", "custom.label"}, "selected message attributes")
    verify_received_md5s(msgs2[0])
    eq(set(msgs2[0].get("Attributes", {})), {"SentTimestamp"}, "selected system attributes")
    r = client.receive_message(QueueUrl=url, WaitTimeSeconds=2)
    msgs3 = r.get("Messages", [])
    eq(len(msgs3), 1, "receive without attribute names")
    check(not msgs3[0].get("MessageAttributes") and not msgs3[0].get("Attributes"),
          "no attributes requested but got %r" % msgs3[0])
    check("MD5OfMessageAttributes" not in msgs3[0],
          "MD5OfMessageAttributes should be omitted when no attributes are returned: %r" % msgs3[0])
    client.delete_message(QueueUrl=url, ReceiptHandle=msgs3[0]["ReceiptHandle"])

    r = client.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    check(not r.get("Messages"), "queue should be empty after deletes, got %r" % r.get("Messages"))


def scenario_batches(client, tracker):
    url = tracker.create(qname("batch"))
    entries = [
        {"Id": "ok-1", "MessageBody": "first",
         "MessageAttributes": {"a": {"DataType": "String", "StringValue": "1"}}},
        {"Id": "bad_backspace", "MessageBody": "has a \u0008 backspace"},
        {"Id": "ok-2", "MessageBody": "second <&>"},
        {"Id": "bad_fffe", "MessageBody": "noncharacter \ufffe here"},
        {"Id": "ok-3", "MessageBody": "third"},
    ]
    resp = client.send_message_batch(QueueUrl=url, Entries=entries)
    ok = {e["Id"]: e for e in resp.get("Successful", [])}
    failed = {e["Id"]: e for e in resp.get("Failed", [])}
    eq(set(ok), {"ok-1", "ok-2", "ok-3"}, "SendMessageBatch Successful ids")
    eq(set(failed), {"bad_backspace", "bad_fffe"}, "SendMessageBatch Failed ids")
    for fid, f in failed.items():
        eq(f.get("Code"), "InvalidMessageContents", "Failed[%s].Code" % fid)
        eq(f.get("SenderFault"), True, "Failed[%s].SenderFault" % fid)
    bodies = {e["Id"]: e["MessageBody"] for e in entries}
    for sid, s in ok.items():
        eq(s.get("MD5OfMessageBody"), md5_hex(bodies[sid].encode("utf-8")), "Successful[%s].MD5OfMessageBody" % sid)
    eq(ok["ok-1"].get("MD5OfMessageAttributes"), md5_of_message_attributes(entries[0]["MessageAttributes"]),
       "Successful[ok-1].MD5OfMessageAttributes")

    msgs = receive_all(client, url, 3, MessageAttributeNames=["All"], VisibilityTimeout=30)
    eq(sorted(m["Body"] for m in msgs), sorted(bodies[i] for i in ok), "bodies received from batch")
    eq({m["MessageId"] for m in msgs}, {s["MessageId"] for s in ok.values()}, "MessageIds received from batch")
    by_body = {m["Body"]: m for m in msgs}

    # ChangeMessageVisibilityBatch: one back to 0 (visible now), one extended, one bad handle.
    resp = client.change_message_visibility_batch(QueueUrl=url, Entries=[
        {"Id": "c1", "ReceiptHandle": by_body["first"]["ReceiptHandle"], "VisibilityTimeout": 0},
        {"Id": "c2", "ReceiptHandle": by_body["third"]["ReceiptHandle"], "VisibilityTimeout": 60},
        {"Id": "c3", "ReceiptHandle": "garbage-handle", "VisibilityTimeout": 10},
    ])
    eq({e["Id"] for e in resp.get("Successful", [])}, {"c1", "c2"}, "ChangeMessageVisibilityBatch Successful ids")
    cf = resp.get("Failed", [])
    eq([e["Id"] for e in cf], ["c3"], "ChangeMessageVisibilityBatch Failed ids")
    eq(cf[0].get("Code"), "ReceiptHandleIsInvalid", "ChangeMessageVisibilityBatch Failed[c3].Code")
    eq(cf[0].get("SenderFault"), True, "ChangeMessageVisibilityBatch Failed[c3].SenderFault")

    again = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                   AttributeNames=["ApproximateReceiveCount"]).get("Messages", [])
    eq([m["Body"] for m in again], ["first"], "only the message made visible by the batch (VisibilityTimeout 0)")
    eq(again[0]["Attributes"]["ApproximateReceiveCount"], "2", "receive count of re-received message")

    resp = client.delete_message_batch(QueueUrl=url, Entries=[
        {"Id": "d1", "ReceiptHandle": again[0]["ReceiptHandle"]},
        {"Id": "d2", "ReceiptHandle": by_body["second <&>"]["ReceiptHandle"]},
        {"Id": "d3", "ReceiptHandle": by_body["third"]["ReceiptHandle"]},
        {"Id": "dbad", "ReceiptHandle": "this-is-not-a-receipt-handle"},
    ])
    eq({e["Id"] for e in resp.get("Successful", [])}, {"d1", "d2", "d3"}, "DeleteMessageBatch Successful ids")
    df = resp.get("Failed", [])
    eq([e["Id"] for e in df], ["dbad"], "DeleteMessageBatch Failed ids")
    eq(df[0].get("Code"), "ReceiptHandleIsInvalid", "DeleteMessageBatch Failed[dbad].Code")
    eq(df[0].get("SenderFault"), True, "DeleteMessageBatch Failed[dbad].SenderFault")
    eq(queue_counts(client, url), (0, 0, 0), "queue counts after batch deletes")

    # Request-level errors. parameter_validation off so the empty list reaches the server.
    raw = make_client(validate=False)
    expect_error("AWS.SimpleQueueService.EmptyBatchRequest", raw.send_message_batch,
                 QueueUrl=url, Entries=[], http_status=400)
    expect_error("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", client.send_message_batch,
                 QueueUrl=url, Entries=[{"Id": "e%d" % i, "MessageBody": "m%d" % i} for i in range(11)],
                 http_status=400)
    expect_error("AWS.SimpleQueueService.BatchEntryIdsNotDistinct", client.send_message_batch,
                 QueueUrl=url, Entries=[{"Id": "same", "MessageBody": "a"}, {"Id": "same", "MessageBody": "b"}],
                 http_status=400)
    expect_error("AWS.SimpleQueueService.InvalidBatchEntryId", client.send_message_batch,
                 QueueUrl=url, Entries=[{"Id": "bad id!", "MessageBody": "a"}], http_status=400)
    expect_error("AWS.SimpleQueueService.EmptyBatchRequest", raw.delete_message_batch,
                 QueueUrl=url, Entries=[], http_status=400)
    expect_error("AWS.SimpleQueueService.BatchEntryIdsNotDistinct", client.delete_message_batch,
                 QueueUrl=url, Entries=[{"Id": "x", "ReceiptHandle": "h1"}, {"Id": "x", "ReceiptHandle": "h2"}],
                 http_status=400)
    expect_error("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", client.change_message_visibility_batch,
                 QueueUrl=url, Entries=[{"Id": "v%d" % i, "ReceiptHandle": "h", "VisibilityTimeout": 1}
                                        for i in range(11)], http_status=400)
    eq(queue_counts(client, url), (0, 0, 0), "rejected batches must not enqueue anything")


def scenario_visibility(client, tracker):
    url = tracker.create(qname("vis"))
    mid = client.send_message(QueueUrl=url, MessageBody="vis")["MessageId"]
    r = client.receive_message(QueueUrl=url, VisibilityTimeout=1, WaitTimeSeconds=2,
                               AttributeNames=["ApproximateReceiveCount"]).get("Messages", [])
    eq(len(r), 1, "first receive")
    eq(r[0]["MessageId"], mid, "first receive MessageId")
    eq(r[0]["Attributes"]["ApproximateReceiveCount"], "1", "first ApproximateReceiveCount")
    t0 = time.monotonic()
    r2 = client.receive_message(QueueUrl=url, WaitTimeSeconds=0).get("Messages", [])
    eq(r2, [], "receive while the message is in flight")
    eq(queue_counts(client, url), (0, 1, 0), "counts while in flight (visible, not visible, delayed)")
    time.sleep(max(0.0, 1.5 - (time.monotonic() - t0)))
    r3 = client.receive_message(QueueUrl=url, WaitTimeSeconds=2, VisibilityTimeout=30,
                                AttributeNames=["All"]).get("Messages", [])
    eq(len(r3), 1, "receive after the 1 s visibility timeout expired")
    eq(r3[0]["MessageId"], mid, "re-received MessageId")
    eq(r3[0]["Attributes"]["ApproximateReceiveCount"], "2", "ApproximateReceiveCount after timeout")
    check(r3[0]["ReceiptHandle"] != r[0]["ReceiptHandle"], "a new receive must yield a new receipt handle")

    client.change_message_visibility(QueueUrl=url, ReceiptHandle=r3[0]["ReceiptHandle"], VisibilityTimeout=0)
    r4 = client.receive_message(QueueUrl=url, WaitTimeSeconds=0,
                                AttributeNames=["ApproximateReceiveCount"]).get("Messages", [])
    eq(len(r4), 1, "receive right after ChangeMessageVisibility(0)")
    eq(r4[0]["MessageId"], mid, "MessageId after ChangeMessageVisibility(0)")
    eq(r4[0]["Attributes"]["ApproximateReceiveCount"], "3", "ApproximateReceiveCount after ChangeMessageVisibility(0)")

    expect_error("ReceiptHandleIsInvalid", client.change_message_visibility, QueueUrl=url,
                 ReceiptHandle="bogus", VisibilityTimeout=5, http_status=404)
    client.delete_message(QueueUrl=url, ReceiptHandle=r4[0]["ReceiptHandle"])
    # Changing the visibility of a deleted message is InvalidParameterValue (spec section 3).
    expect_error("InvalidParameterValue", client.change_message_visibility, QueueUrl=url,
                 ReceiptHandle=r4[0]["ReceiptHandle"], VisibilityTimeout=5)
    eq(queue_counts(client, url), (0, 0, 0), "counts after delete")


def scenario_dead_letter_queue(client, tracker):
    dlq = tracker.create(qname("dlq"))
    dlq_arn = client.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
    src = tracker.create(qname("src"), {"RedrivePolicy": policy})
    src_attrs = client.get_queue_attributes(QueueUrl=src, AttributeNames=["QueueArn", "RedrivePolicy"])["Attributes"]
    src_arn = src_attrs["QueueArn"]
    got_policy = json.loads(src_attrs.get("RedrivePolicy", "null") or "null")
    check(isinstance(got_policy, dict), "RedrivePolicy not returned: %r" % src_attrs)
    eq(got_policy.get("deadLetterTargetArn"), dlq_arn, "RedrivePolicy.deadLetterTargetArn")
    eq(int(got_policy.get("maxReceiveCount")), 1, "RedrivePolicy.maxReceiveCount")

    sent = client.send_message(QueueUrl=src, MessageBody="to the dlq",
                               MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}})
    mid = sent["MessageId"]
    r1 = client.receive_message(QueueUrl=src, VisibilityTimeout=0, WaitTimeSeconds=2).get("Messages", [])
    eq([m["MessageId"] for m in r1], [mid], "first receive from source")
    r2 = client.receive_message(QueueUrl=src, VisibilityTimeout=0, WaitTimeSeconds=1).get("Messages", [])
    eq(r2, [], "second receive from source (maxReceiveCount=1 -> moved to DLQ, not returned)")

    found = []
    deadline = time.monotonic() + 6
    while not found and time.monotonic() < deadline:
        found = client.receive_message(QueueUrl=dlq, WaitTimeSeconds=2, AttributeNames=["All"],
                                       MessageAttributeNames=["All"]).get("Messages", [])
    eq(len(found), 1, "messages found in the DLQ")
    d = found[0]
    verify_received_md5s(d)
    eq(d["MessageId"], mid, "MessageId kept across the DLQ move")
    eq(d["Body"], "to the dlq", "body in DLQ")
    eq(d.get("MessageAttributes", {}).get("k", {}).get("StringValue"), "v", "message attribute kept in DLQ")
    eq(d.get("Attributes", {}).get("DeadLetterQueueSourceArn"), src_arn, "DeadLetterQueueSourceArn")
    print("  info: DLQ first receive ApproximateReceiveCount=%s" % d.get("Attributes", {}).get("ApproximateReceiveCount"))

    lst = client.list_dead_letter_source_queues(QueueUrl=dlq)
    eq(lst.get("queueUrls"), [src], "ListDeadLetterSourceQueues(dlq)")
    eq(client.list_dead_letter_source_queues(QueueUrl=src).get("queueUrls", []), [],
       "ListDeadLetterSourceQueues(source)")
    client.delete_message(QueueUrl=dlq, ReceiptHandle=d["ReceiptHandle"])
    eq(queue_counts(client, src), (0, 0, 0), "source counts after move")


def scenario_fifo(client, tracker):
    name = qname("fifo", fifo=True)
    url = tracker.create(name, {"FifoQueue": "true"})
    attrs = client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    eq(attrs.get("FifoQueue"), "true", "FifoQueue attribute")
    eq(attrs.get("ContentBasedDeduplication"), "false", "ContentBasedDeduplication default")

    sends = [("g1", "d1", "g1-m1"), ("g1", "d2", "g1-m2"), ("g2", "d4", "g2-m1"), ("g1", "d3", "g1-m3")]
    ids = {}
    seqs = []
    for group, dedup, body in sends:
        r = client.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=dedup)
        check(r.get("SequenceNumber"), "FIFO SendMessage should return SequenceNumber: %r" % r)
        ids[body] = r["MessageId"]
        seqs.append(int(r["SequenceNumber"]))
    eq(seqs, sorted(seqs), "SequenceNumbers must increase in send order")
    check(len(set(seqs)) == len(seqs), "SequenceNumbers must be distinct: %r" % seqs)

    # Duplicate send (same dedup id, even with another body / group): same MessageId, nothing added.
    dup = client.send_message(QueueUrl=url, MessageBody="g1-m2 duplicate", MessageGroupId="g1",
                              MessageDeduplicationId="d2")
    eq(dup["MessageId"], ids["g1-m2"], "MessageId returned for a duplicate send")
    eq(dup.get("MD5OfMessageBody"), md5_hex(b"g1-m2 duplicate"), "duplicate send MD5 is of the current body")
    eq(queue_counts(client, url), (4, 0, 0), "FIFO counts after 4 sends + 1 duplicate")

    r = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=30, WaitTimeSeconds=1,
                               AttributeNames=["All"]).get("Messages", [])
    for m in r:
        verify_received_md5s(m)
    bodies = [m["Body"] for m in r]
    g1 = [b for b in bodies if b.startswith("g1-")]
    eq(g1, ["g1-m1", "g1-m2", "g1-m3"], "g1 messages of the first receive, in send order")
    for m in r:
        a = m.get("Attributes", {})
        check(a.get("MessageGroupId") in ("g1", "g2") and a.get("SequenceNumber") and a.get("MessageDeduplicationId"),
              "FIFO system attributes missing on %s: %r" % (m["Body"], a))
    received = list(r)

    # While g1 is in flight, a new g1 message must not be delivered; g2 may be.
    client.send_message(QueueUrl=url, MessageBody="g1-m4", MessageGroupId="g1", MessageDeduplicationId="d5")
    r2 = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
    leaked = [m["Body"] for m in r2 if m["Body"].startswith("g1-")]
    eq(leaked, [], "g1 messages delivered while other g1 messages are in flight")
    received += r2
    eq(sorted(m["Body"] for m in received), ["g1-m1", "g1-m2", "g1-m3", "g2-m1"], "all bodies received so far")

    # Duplicate of an already received message: still deduplicated.
    dup2 = client.send_message(QueueUrl=url, MessageBody="again", MessageGroupId="g2", MessageDeduplicationId="d1")
    eq(dup2["MessageId"], ids["g1-m1"], "MessageId for duplicate of in-flight message (queue-wide dedup scope)")
    eq(queue_counts(client, url), (1, 4, 0), "FIFO counts (visible g1-m4, 4 in flight)")

    for m in received:
        client.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    r3 = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    eq([m["Body"] for m in r3], ["g1-m4"], "g1 unblocked after deleting its in-flight messages")
    client.delete_message(QueueUrl=url, ReceiptHandle=r3[0]["ReceiptHandle"])

    # Missing group id is rejected.
    expect_error("MissingParameter", client.send_message, QueueUrl=url, MessageBody="x", MessageDeduplicationId="dx")

    # Content-based deduplication.
    curl = tracker.create(qname("cbd", fifo=True), {"FifoQueue": "true", "ContentBasedDeduplication": "true"})
    a = client.send_message(QueueUrl=curl, MessageBody="same body", MessageGroupId="g")
    b = client.send_message(QueueUrl=curl, MessageBody="same body", MessageGroupId="g")
    c = client.send_message(QueueUrl=curl, MessageBody="other body", MessageGroupId="g")
    eq(b["MessageId"], a["MessageId"], "CBD: identical body must dedup to the same MessageId")
    check(c["MessageId"] != a["MessageId"], "CBD: a different body must get a new MessageId")
    got = receive_all(client, curl, 2, AttributeNames=["MessageDeduplicationId"])
    eq([m["Body"] for m in got], ["same body", "other body"], "CBD queue contents")
    eq(got[0]["Attributes"].get("MessageDeduplicationId"),
       hashlib.sha256(b"same body").hexdigest(), "CBD MessageDeduplicationId (SHA-256 hex of body, spec section 7)")
    extra = client.receive_message(QueueUrl=curl, WaitTimeSeconds=0).get("Messages", [])
    eq(extra, [], "CBD queue should hold exactly 2 messages")


def scenario_long_poll(client, tracker):
    url = tracker.create(qname("poll"))
    t0 = time.monotonic()
    r = client.receive_message(QueueUrl=url, WaitTimeSeconds=2)
    elapsed = time.monotonic() - t0
    check(not r.get("Messages"), "empty queue long poll returned messages: %r" % r.get("Messages"))
    check(1.8 <= elapsed <= 4.0, "long poll WaitTimeSeconds=2 on empty queue took %.2f s (want ~2 s)" % elapsed)

    sender = make_client()
    errors = []

    def send_later():
        try:
            time.sleep(1.0)
            sender.send_message(QueueUrl=url, MessageBody="wake up")
        except Exception as e:  # reported by the main thread
            errors.append(e)

    th = threading.Thread(target=send_later, daemon=True)
    t0 = time.monotonic()
    th.start()
    r = client.receive_message(QueueUrl=url, WaitTimeSeconds=10)
    elapsed = time.monotonic() - t0
    th.join(5)
    check(not errors, "background send failed: %r" % errors)
    msgs = r.get("Messages", [])
    eq([m["Body"] for m in msgs], ["wake up"], "long poll result")
    check(0.8 <= elapsed <= 4.0, "long poll WaitTimeSeconds=10 should return ~1 s after the send, took %.2f s" % elapsed)
    client.delete_message(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"])

    # Queue-level default wait time is used when WaitTimeSeconds is not given.
    client.set_queue_attributes(QueueUrl=url, Attributes={"ReceiveMessageWaitTimeSeconds": "1"})
    t0 = time.monotonic()
    r = client.receive_message(QueueUrl=url)
    elapsed = time.monotonic() - t0
    check(not r.get("Messages") and 0.8 <= elapsed <= 3.0,
          "receive with queue default ReceiveMessageWaitTimeSeconds=1 took %.2f s (want ~1 s)" % elapsed)

    expect_error("InvalidParameterValue", client.receive_message, QueueUrl=url, WaitTimeSeconds=21)
    expect_error("InvalidParameterValue", client.receive_message, QueueUrl=url, MaxNumberOfMessages=11)


def scenario_purge(client, tracker):
    url = tracker.create(qname("purge"))
    for i in range(3):
        client.send_message(QueueUrl=url, MessageBody="p%d" % i)
    client.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=30)
    inflight = client.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
    eq(len(inflight), 1, "one message taken in flight before purge")
    client.purge_queue(QueueUrl=url)
    r = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    eq(r, [], "receive after purge")
    eq(queue_counts(client, url), (0, 0, 0), "counts after purge (visible, in flight and delayed all gone)")
    e = expect_error("AWS.SimpleQueueService.PurgeQueueInProgress", client.purge_queue, QueueUrl=url,
                     http_status=403)
    check(isinstance(e, client.exceptions.PurgeQueueInProgress),
          "botocore should map the error to PurgeQueueInProgress, got %s" % type(e).__name__)
    # Sending after a purge works.
    client.send_message(QueueUrl=url, MessageBody="after purge")
    got = receive_all(client, url, 1)
    eq([m["Body"] for m in got], ["after purge"], "message sent after purge")


SCENARIOS = [
    ("queue_lifecycle", scenario_queue_lifecycle),
    ("send_receive_delete", scenario_send_receive_delete),
    ("batches", scenario_batches),
    ("visibility", scenario_visibility),
    ("dead_letter_queue", scenario_dead_letter_queue),
    ("fifo", scenario_fifo),
    ("long_poll", scenario_long_poll),
    ("purge", scenario_purge),
]


def main():
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        if not os.environ.get(var):
            print("missing environment variable %s" % var, file=sys.stderr)
            print("0 passed, %d failed" % len(SCENARIOS))
            return 1
    only = set(sys.argv[1:])
    client = make_client()
    passed = failed = 0
    started = time.monotonic()
    for name, fn in SCENARIOS:
        if only and name not in only:
            continue
        tracker = QueueTracker(client)
        t0 = time.monotonic()
        try:
            fn(client, tracker)
            passed += 1
            print("PASS %s (%.1f s)" % (name, time.monotonic() - t0), flush=True)
        except Exception as e:
            failed += 1
            traceback.print_exc(file=sys.stdout)
            print("FAIL %s (%.1f s): %s" % (name, time.monotonic() - t0, e), flush=True)
        finally:
            tracker.cleanup()
    print("total %.1f s" % (time.monotonic() - started))
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
