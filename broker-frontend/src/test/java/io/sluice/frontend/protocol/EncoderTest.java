package io.sluice.frontend.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Response and error shapes of both protocols (spec 1.5 and 1.6). */
class EncoderTest {

    private static ObjectNode json(String text) throws Exception {
        return (ObjectNode) JsonCodec.mapper().readTree(text);
    }

    @Test
    void xmlFlattensListsRendersMapsAndEscapesCarriageReturns() throws Exception {
        ObjectNode result = json("{\"Messages\":[{\"MessageId\":\"m\",\"Body\":\"a\\r\\n<&>\\\"\","
                + "\"Attributes\":{\"SentTimestamp\":\"1\"},"
                + "\"MessageAttributes\":{\"n\":{\"StringValue\":\"v\",\"DataType\":\"String\"}}}]}");
        String xml = new String(XmlEncoder.success("ReceiveMessage", result, "rid"), StandardCharsets.UTF_8);
        assertEquals("<?xml version=\"1.0\"?>\n<ReceiveMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\">"
                + "<ReceiveMessageResult><Message><MessageId>m</MessageId><Body>a&#xD;\n&lt;&amp;&gt;&quot;</Body>"
                + "<Attribute><Name>SentTimestamp</Name><Value>1</Value></Attribute>"
                + "<MessageAttribute><Name>n</Name><Value><StringValue>v</StringValue><DataType>String</DataType></Value>"
                + "</MessageAttribute></Message></ReceiveMessageResult>"
                + "<ResponseMetadata><RequestId>rid</RequestId></ResponseMetadata></ReceiveMessageResponse>", xml);
    }

    @Test
    void emptyResultsAndBatchEntryNames() throws Exception {
        assertTrue(new String(XmlEncoder.success("ReceiveMessage", json("{}"), "r"), StandardCharsets.UTF_8)
                .contains("<ReceiveMessageResult/>"));
        String batch = new String(XmlEncoder.success("SendMessageBatch", json("{\"Successful\":[{\"Id\":\"a\"}],"
                + "\"Failed\":[{\"Id\":\"b\",\"SenderFault\":true}]}"), "r"), StandardCharsets.UTF_8);
        assertTrue(batch.contains("<SendMessageBatchResultEntry><Id>a</Id></SendMessageBatchResultEntry>"), batch);
        assertTrue(batch.contains("<BatchResultErrorEntry><Id>b</Id><SenderFault>true</SenderFault></BatchResultErrorEntry>"));
        String urls = new String(XmlEncoder.success("ListQueues", json("{\"QueueUrls\":[\"u1\",\"u2\"]}"), "r"),
                StandardCharsets.UTF_8);
        assertTrue(urls.contains("<ListQueuesResult><QueueUrl>u1</QueueUrl><QueueUrl>u2</QueueUrl></ListQueuesResult>"));
    }

    @Test
    void errorsInBothProtocols() {
        var failure = SqsError.QUEUE_DOES_NOT_EXIST.withMessage("The specified queue does not exist.");
        assertEquals("<?xml version=\"1.0\"?>\n<ErrorResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\">"
                + "<Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>"
                + "<Message>The specified queue does not exist.</Message><Detail/></Error><RequestId>r</RequestId>"
                + "</ErrorResponse>", new String(XmlEncoder.error(failure, "r"), StandardCharsets.UTF_8));
        assertEquals("{\"__type\":\"com.amazonaws.sqs#QueueDoesNotExist\",\"message\":\"The specified queue does not exist.\"}",
                new String(JsonCodec.error(failure), StandardCharsets.UTF_8));
        assertEquals("AWS.SimpleQueueService.NonExistentQueue;Sender", JsonCodec.queryErrorHeader(failure));
        assertEquals("InternalError;Receiver", JsonCodec.queryErrorHeader(SqsError.INTERNAL_FAILURE.failure()));
    }
}
