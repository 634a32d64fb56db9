package io.sluice.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;

/**
 * Writes HTTP/1.1 requests byte for byte over a socket, so a test can send what no HTTP client would, and signs
 * them (when asked) with the AWS SDK's own SigV4 signer.
 */
final class RawHttp {
    record Response(int status, String head, String body) {
    }

    private RawHttp() {
    }

    /**
     * Milliseconds until the server closes {@code s} (reads until EOF or reset), or Long.MAX_VALUE when it is still
     * open after {@code maxMillis}.
     */
    static long millisUntilClosed(Socket s, long maxMillis) throws IOException {
        long start = System.nanoTime();
        s.setSoTimeout((int) maxMillis);
        InputStream in = s.getInputStream();
        try {
            while (in.read() >= 0) {
                // whatever it answers, we wait for the close
            }
        } catch (SocketTimeoutException e) {
            return Long.MAX_VALUE;
        } catch (java.net.SocketException e) {
            // reset: closed
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /** Sends raw bytes, reads one response (or returns status -1 if the server closed without answering). */
    static Response exchange(int port, byte[] request) throws IOException {
        return exchange("127.0.0.1", port, request);
    }

    /** {@link #exchange(int, byte[])} with a server at {@code host}. */
    static Response exchange(String host, int port, byte[] request) throws IOException {
        try (Socket s = new Socket(host, port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(request);
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            byte[] chunk = new byte[8192];
            int headEnd = -1;
            int contentLength = -1;
            while (true) {
                int n;
                try {
                    n = in.read(chunk);
                } catch (SocketTimeoutException | java.net.SocketException e) {
                    break;
                }
                if (n < 0) {
                    break;
                }
                buf.write(chunk, 0, n);
                String text = buf.toString(StandardCharsets.ISO_8859_1);
                if (headEnd < 0) {
                    headEnd = text.indexOf("\r\n\r\n");
                    if (headEnd >= 0) {
                        for (String line : text.substring(0, headEnd).split("\r\n")) {
                            if (line.toLowerCase().startsWith("content-length:")) {
                                contentLength = Integer.parseInt(line.substring(15).trim());
                            }
                        }
                    }
                }
                if (headEnd >= 0 && contentLength >= 0 && buf.size() >= headEnd + 4 + contentLength) {
                    break;
                }
            }
            String text = buf.toString(StandardCharsets.UTF_8);
            int end = text.indexOf("\r\n\r\n");
            if (end < 0 || !text.startsWith("HTTP/1.1 ")) {
                return new Response(-1, text, "");
            }
            int status = Integer.parseInt(text.substring(9, 12));
            return new Response(status, text.substring(0, end), text.substring(end + 4));
        }
    }

    /** A request with the given headers and body, signed with SigV4 for {@code secret} unless it is null. */
    static byte[] build(int port, String method, String path, Map<String, String> headers, byte[] body,
                        String accessKey, String secret) {
        return build("127.0.0.1", port, method, path, headers, body, accessKey, secret);
    }

    /** {@link #build(int, String, String, Map, byte[], String, String)} for a server at {@code host}. */
    static byte[] build(String host, int port, String method, String path, Map<String, String> headers, byte[] body,
                        String accessKey, String secret) {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("Host", host + ":" + port);
        all.putAll(headers);
        if (secret != null) {
            SdkHttpRequest.Builder unsigned = SdkHttpRequest.builder().method(SdkHttpMethod.fromValue(method))
                    .uri(java.net.URI.create("http://" + host + ":" + port + path));
            all.forEach((k, v) -> unsigned.putHeader(k, v));
            SignedRequest signed = AwsV4HttpSigner.create().sign(r -> r
                    .identity(AwsBasicCredentials.create(accessKey, secret))
                    .request(unsigned.build())
                    .payload(ContentStreamProvider.fromByteArray(body))
                    .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "sqs")
                    .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1")
                    .putProperty(AwsV4HttpSigner.SIGNING_CLOCK, java.time.Clock.fixed(Instant.now(), java.time.ZoneOffset.UTC)));
            all.clear();
            signed.request().headers().forEach((k, v) -> all.put(k, String.join(",", v)));
        }
        StringBuilder head = new StringBuilder();
        head.append(method).append(' ').append(path).append(" HTTP/1.1\r\n");
        all.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
        if (all.keySet().stream().noneMatch(k -> k.equalsIgnoreCase("Content-Length"))) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[h.length + body.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(body, 0, out, h.length, body.length);
        return out;
    }
}
