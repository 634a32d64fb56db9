package io.sluice.frontend.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import org.junit.jupiter.api.Test;

/** Flattened Query parameters become the JSON protocol's tree (spec 1.4, captured from botocore). */
class QueryDecoderTest {

    private static ObjectNode decode(String action, String form) {
        return QueryDecoder.decode(action, FormDecoder.decode(form));
    }

    private static ObjectNode json(String text) throws Exception {
        return (ObjectNode) JsonCodec.mapper().readTree(text);
    }

    @Test
    void scalarsListsAndMaps() throws Exception {
        assertEquals(json("{\"QueueUrl\":\"u\",\"AttributeNames\":[\"All\",\"QueueArn\"]}"),
                decode("GetQueueAttributes", "Action=GetQueueAttributes&Version=2012-11-05&QueueUrl=u"
                        + "&AttributeName.2=QueueArn&AttributeName.1=All"));
        assertEquals(json("{\"QueueName\":\"q\",\"Attributes\":{\"DelaySeconds\":\"5\"},\"tags\":{\"k\":\"v\"}}"),
                decode("CreateQueue", "Action=CreateQueue&QueueName=q&Attribute.1.Name=DelaySeconds"
                        + "&Attribute.1.Value=5&Tag.1.Key=k&Tag.1.Value=v"));
        assertEquals(json("{\"QueueUrl\":\"u\",\"Tags\":{\"k\":\"v\"}}"),
                decode("TagQueue", "Action=TagQueue&QueueUrl=u&Tag.1.Key=k&Tag.1.Value=v"));
    }

    @Test
    void botocoreEmptyListsAreEmptyLists() throws Exception {
        assertEquals(json("{\"QueueUrl\":\"u\",\"AttributeNames\":[],\"MessageAttributeNames\":[]}"),
                decode("ReceiveMessage", "Action=ReceiveMessage&QueueUrl=u&AttributeNames=&MessageAttributeNames="));
    }

    @Test
    void nestedBatchEntriesWithMessageAttributesKeepIndexOrderDespiteGaps() throws Exception {
        ObjectNode tree = decode("SendMessageBatch", "Action=SendMessageBatch&QueueUrl=u"
                + "&SendMessageBatchRequestEntry.10.Id=b&SendMessageBatchRequestEntry.10.MessageBody=y"
                + "&SendMessageBatchRequestEntry.2.Id=a&SendMessageBatchRequestEntry.2.MessageBody=x+y%0D%0A"
                + "&SendMessageBatchRequestEntry.2.MessageAttribute.1.Name=n"
                + "&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType=Number"
                + "&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue=1");
        assertEquals(json("{\"QueueUrl\":\"u\",\"Entries\":[{\"Id\":\"a\",\"MessageBody\":\"x y\\r\\n\","
                + "\"MessageAttributes\":{\"n\":{\"DataType\":\"Number\",\"StringValue\":\"1\"}}},"
                + "{\"Id\":\"b\",\"MessageBody\":\"y\"}]}"), tree);
    }

    @Test
    void malformedEncodingsAndIndicesAreRejected() {
        assertEquals(SqsError.MALFORMED_REQUEST,
                assertThrows(SqsException.class, () -> FormDecoder.decode("MessageBody=%ZZ")).failure().error());
        assertEquals(SqsError.MALFORMED_REQUEST,
                assertThrows(SqsException.class, () -> FormDecoder.decode("MessageBody=%4")).failure().error());
        assertEquals(SqsError.INVALID_PARAMETER_VALUE,
                assertThrows(SqsException.class, () -> FormDecoder.decode("MessageBody=%C3%28")).failure().error());
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, assertThrows(SqsException.class,
                () -> decode("GetQueueAttributes", "AttributeName.x=All")).failure().error());
    }
}
