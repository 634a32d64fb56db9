package io.sluice.partition;

import io.sluice.common.MessageAttributeValue;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Length-prefixed binary primitives shared by the stored-record and log-entry codecs: big-endian integers, UTF-8
 * strings with a -1 length for null, attribute maps in name order. Readers fail on truncated input with
 * {@link java.nio.BufferUnderflowException}, never by reading garbage.
 */
public final class Bytes {
    public static final byte V1 = 1;

    private Bytes() {
    }

    public static final class Writer {
        private byte[] buf;
        private int len;

        public Writer(int capacity) {
            buf = new byte[Math.max(16, capacity)];
        }

        private void ensure(int n) {
            if (len + n > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
            }
        }

        public void u8(int v) {
            ensure(1);
            buf[len++] = (byte) v;
        }

        public void i32(int v) {
            ensure(4);
            ByteBuffer.wrap(buf, len, 4).putInt(v);
            len += 4;
        }

        public void i64(long v) {
            ensure(8);
            ByteBuffer.wrap(buf, len, 8).putLong(v);
            len += 8;
        }

        public void bytes(byte[] b) {
            i32(b.length);
            ensure(b.length);
            System.arraycopy(b, 0, buf, len, b.length);
            len += b.length;
        }

        public void str(String s) {
            if (s == null) {
                i32(-1);
            } else {
                bytes(s.getBytes(StandardCharsets.UTF_8));
            }
        }

        public void attributes(Map<String, MessageAttributeValue> attributes) {
            i32(attributes.size());
            for (Map.Entry<String, MessageAttributeValue> e : new TreeMap<>(attributes).entrySet()) {
                str(e.getKey());
                str(e.getValue().dataType());
                if (e.getValue().isBinary()) {
                    u8(2);
                    bytes(e.getValue().binaryValue());
                } else {
                    u8(1);
                    str(e.getValue().stringValue());
                }
            }
        }

        public byte[] toBytes() {
            return Arrays.copyOf(buf, len);
        }
    }

    public static final class Reader {
        private final ByteBuffer buf;

        public Reader(byte[] bytes) {
            buf = ByteBuffer.wrap(bytes);
        }

        public void version() {
            int v = u8();
            if (v != V1) {
                throw new IllegalStateException("unknown record format version " + v);
            }
        }

        public boolean hasRemaining() {
            return buf.hasRemaining();
        }

        public int u8() {
            return buf.get() & 0xFF;
        }

        public int i32() {
            return buf.getInt();
        }

        public long i64() {
            return buf.getLong();
        }

        public byte[] bytes() {
            byte[] b = new byte[length(buf.getInt())];
            buf.get(b);
            return b;
        }

        /**
         * A count of items that follow, each at least one byte: refused when the bytes left cannot hold that many, so
         * a corrupt or forged count fails here instead of sizing an allocation.
         */
        public int count() {
            return length(buf.getInt());
        }

        private int length(int n) {
            if (n < 0 || n > buf.remaining()) {
                throw new IllegalArgumentException("implausible length " + n + " with " + buf.remaining() + " bytes left");
            }
            return n;
        }

        public String str() {
            int n = buf.getInt();
            if (n < 0) {
                return null;
            }
            String s = new String(buf.array(), buf.position(), n, StandardCharsets.UTF_8);
            buf.position(buf.position() + n);
            return s;
        }

        public Map<String, MessageAttributeValue> attributes() {
            int n = i32();
            if (n == 0) {
                return Map.of();
            }
            Map<String, MessageAttributeValue> out = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                String name = str();
                String type = str();
                int kind = u8();
                out.put(name, kind == 2 ? new MessageAttributeValue(type, null, bytes())
                        : new MessageAttributeValue(type, str(), null));
            }
            return out;
        }
    }
}
