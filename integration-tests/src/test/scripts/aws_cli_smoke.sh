#!/usr/bin/env bash
# Smoke test of Sluice with Debian's AWS CLI 2.9.19 (/usr/bin/aws), which speaks the SQS
# Query protocol (form-encoded requests, XML responses).
#
# Environment: SLUICE_ENDPOINT (e.g. http://127.0.0.1:9324), AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY. JSON output is parsed with /usr/bin/python3 (no jq needed).
# Prints "PASS <step>" per step and finally "N passed, 0 failed"; on the first failure it
# prints "FAIL <step>: <reason>", "N passed, 1 failed" and exits non-zero.
set -euo pipefail

: "${SLUICE_ENDPOINT:?SLUICE_ENDPOINT must be set}"
: "${AWS_ACCESS_KEY_ID:?AWS_ACCESS_KEY_ID must be set}"
: "${AWS_SECRET_ACCESS_KEY:?AWS_SECRET_ACCESS_KEY must be set}"
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY

# Keep the run hermetic: no profiles/config files of the user, no pager, no retries that
# could hide a server error.
unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_CA_BUNDLE || true
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_PAGER="" AWS_MAX_ATTEMPTS=1 AWS_RETRY_MODE=standard

PY=/usr/bin/python3
AWS=(/usr/bin/aws --endpoint-url "$SLUICE_ENDPOINT" --region us-east-1 --output json)

TMP=$(mktemp -d)
SUFFIX="$(date +%s)-$$-$RANDOM"
QUEUE="it-cli-$SUFFIX"
MISSING="it-cli-missing-$SUFFIX"
QUEUE_URL=""
export TMP QUEUE QUEUE_URL
PASSED=0
STEP="setup"
DONE=0

on_exit() {
    local rc=$?
    if [[ -n "$QUEUE_URL" ]]; then
        /usr/bin/aws --endpoint-url "$SLUICE_ENDPOINT" --region us-east-1 sqs delete-queue \
            --queue-url "$QUEUE_URL" >/dev/null 2>&1 || true
    fi
    if [[ $DONE -ne 1 ]]; then
        echo "FAIL $STEP (exit status $rc)"
        for f in "$TMP"/*.err; do
            [[ -s "$f" ]] && { echo "--- $(basename "$f"):"; cat "$f"; }
        done
        echo "$PASSED passed, 1 failed"
        rm -rf "$TMP"
        exit 1
    fi
    rm -rf "$TMP"
}
trap on_exit EXIT

pass() { echo "PASS $1"; PASSED=$((PASSED + 1)); }

fail() { echo "  reason: $*" >&2; exit 1; }

# sqs <name> <args...>: runs the CLI, stdout -> $TMP/<name>.json, stderr -> $TMP/<name>.err
sqs() {
    local name=$1; shift
    "${AWS[@]}" sqs "$@" >"$TMP/$name.json" 2>"$TMP/$name.err"
}

# check <name> <python expression over `d` (parsed JSON, {} if output was empty)>
# The expression must evaluate truthy; extra values are available as env vars.
check() {
    local name=$1 expr=$2
    "$PY" -c '
import json, os, sys, hashlib
raw = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(raw) if raw.strip() else {}
ok = eval(sys.argv[2])
if not ok:
    print("assertion failed: %s\noutput was: %s" % (sys.argv[2], raw), file=sys.stderr)
    sys.exit(1)
' "$TMP/$name.json" "$expr" || fail "$name: $expr"
}

# get <name> <python expression>: prints the value of the expression
get() {
    "$PY" -c '
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(raw) if raw.strip() else {}
print(eval(sys.argv[2]))
' "$TMP/$1.json" "$2"
}

# ---------------------------------------------------------------------------------------

STEP="create-queue"
sqs create create-queue --queue-name "$QUEUE" --attributes VisibilityTimeout=45,DelaySeconds=0 \
    --tags team=sluice,env=it
check create 'd["QueueUrl"].rstrip("/").endswith("/" + os.environ["QUEUE"])'
QUEUE_URL=$(get create 'd["QueueUrl"]')
export QUEUE_URL
pass "create-queue $QUEUE_URL"

STEP="get-queue-url"
sqs url get-queue-url --queue-name "$QUEUE"
check url 'd["QueueUrl"] == os.environ["QUEUE_URL"]'
pass "get-queue-url"

STEP="list-queues"
sqs list list-queues --queue-name-prefix "$QUEUE"
check list 'os.environ["QUEUE_URL"] in d.get("QueueUrls", [])'
pass "list-queues --queue-name-prefix"

STEP="list-queue-tags"
sqs tags list-queue-tags --queue-url "$QUEUE_URL"
check tags 'd.get("Tags") == {"team": "sluice", "env": "it"}'
pass "list-queue-tags"

STEP="send-message"
# Body with CRLF, unicode and XML special characters; must round-trip exactly.
BODY=$'Hello <&> "double" \'single\' \u00e9\u2713\U0001F600\r\nsecond line\ttab'
export BODY
MSG_ATTRS='{"str":{"DataType":"String","StringValue":"v <&>"},"num":{"DataType":"Number","StringValue":"42"},"bin":{"DataType":"Binary","BinaryValue":"AAEC/w=="}}'
sqs send send-message --queue-url "$QUEUE_URL" --message-body "$BODY" --message-attributes "$MSG_ATTRS"
check send 'len(d["MessageId"]) == 36'
check send 'd["MD5OfMessageBody"] == hashlib.md5(os.environ["BODY"].encode("utf-8")).hexdigest()'
check send 'len(d.get("MD5OfMessageAttributes", "")) == 32'
MESSAGE_ID=$(get send 'd["MessageId"]')
export MESSAGE_ID
pass "send-message with message attributes"

STEP="receive-message"
sqs recv receive-message --queue-url "$QUEUE_URL" --attribute-names All --message-attribute-names All \
    --wait-time-seconds 2 --max-number-of-messages 1
check recv 'len(d.get("Messages", [])) == 1'
check recv 'd["Messages"][0]["MessageId"] == os.environ["MESSAGE_ID"]'
check recv 'd["Messages"][0]["Body"] == os.environ["BODY"]'
check recv 'd["Messages"][0]["MD5OfBody"] == hashlib.md5(os.environ["BODY"].encode("utf-8")).hexdigest()'
check recv 'd["Messages"][0]["MD5OfMessageAttributes"] == json.load(open(os.environ["TMP"] + "/send.json"))["MD5OfMessageAttributes"]'
check recv 'd["Messages"][0]["MessageAttributes"]["str"] == {"DataType": "String", "StringValue": "v <&>"}'
check recv 'd["Messages"][0]["MessageAttributes"]["num"] == {"DataType": "Number", "StringValue": "42"}'
check recv 'd["Messages"][0]["MessageAttributes"]["bin"] == {"DataType": "Binary", "BinaryValue": "AAEC/w=="}'
check recv 'd["Messages"][0]["Attributes"]["ApproximateReceiveCount"] == "1"'
check recv '"SentTimestamp" in d["Messages"][0]["Attributes"] and "SenderId" in d["Messages"][0]["Attributes"]'
RECEIPT=$(get recv 'd["Messages"][0]["ReceiptHandle"]')
pass "receive-message (body, attributes, MD5s)"

STEP="delete-message"
sqs del delete-message --queue-url "$QUEUE_URL" --receipt-handle "$RECEIPT"
sqs recv2 receive-message --queue-url "$QUEUE_URL" --wait-time-seconds 0
check recv2 'not d.get("Messages")'
pass "delete-message"

STEP="get-queue-attributes"
sqs attrs get-queue-attributes --queue-url "$QUEUE_URL" --attribute-names All
check attrs 'd["Attributes"]["VisibilityTimeout"] == "45"'
check attrs 'd["Attributes"]["ApproximateNumberOfMessages"] == "0"'
check attrs 'd["Attributes"]["QueueArn"].endswith(":" + os.environ["QUEUE"])'
check attrs 'all(isinstance(v, str) for v in d["Attributes"].values())'
pass "get-queue-attributes All"

STEP="purge-queue"
sqs send2 send-message --queue-url "$QUEUE_URL" --message-body "to be purged"
sqs send3 send-message --queue-url "$QUEUE_URL" --message-body "to be purged too"
sqs purge purge-queue --queue-url "$QUEUE_URL"
sqs attrs2 get-queue-attributes --queue-url "$QUEUE_URL" \
    --attribute-names ApproximateNumberOfMessages ApproximateNumberOfMessagesNotVisible
check attrs2 'd["Attributes"] == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}'
sqs recv3 receive-message --queue-url "$QUEUE_URL" --wait-time-seconds 1
check recv3 'not d.get("Messages")'
pass "purge-queue"

STEP="delete-queue"
sqs delq delete-queue --queue-url "$QUEUE_URL"
export DELETED_URL=$QUEUE_URL
QUEUE_URL=""
sqs list2 list-queues --queue-name-prefix "$QUEUE"
check list2 'os.environ["DELETED_URL"] not in d.get("QueueUrls", [])'
pass "delete-queue"

STEP="get-queue-url of a missing queue"
for missing in "$MISSING" "$QUEUE"; do
    if sqs missing get-queue-url --queue-name "$missing"; then
        fail "get-queue-url --queue-name $missing succeeded: $(cat "$TMP/missing.json")"
    fi
    grep -q 'NonExistentQueue' "$TMP/missing.err" \
        || fail "stderr of get-queue-url $missing lacks NonExistentQueue: $(cat "$TMP/missing.err")"
done
: >"$TMP/missing.err"
pass "get-queue-url of missing/deleted queue fails with NonExistentQueue"

DONE=1
echo "$PASSED passed, 0 failed"
