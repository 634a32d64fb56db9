package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * The web console ({@code /console} on the admin port) against {@code sluice dev}: its doors with raw HTTP (a sign-in
 * without its form token, a wrong secret, a state-changing form without the session's CSRF token, the cookie's
 * attributes), then a real browser (Selenium driving Debian's chromium: skipped without it, failing under
 * {@code SLUICE_REQUIRE_TOOLS=1}) signing in, listing queues, opening one, sending, purging with the typed
 * confirmation, the cluster page, and a key limited by its rules. The browser's screenshots go to
 * {@code target/console-screenshots} (docs/console.md shows them).
 */
class ConsoleIT {
    private static final Pattern CSRF = Pattern.compile("name=\"csrf\" value=\"([0-9a-f]{64})\"");
    static SluiceProcess server;
    static SqsClient sqs;
    static String base;

    @BeforeAll
    static void start() throws Exception {
        Path keys = Files.createTempFile(SluiceProcess.itDir(), "console-keys", ".json");
        Files.writeString(keys, "{\"keys\": [{\"accessKey\": \"mine\", \"secretKey\": \"mine-secret\","
                + " \"allow\": [{\"action\": \"*\", \"queue\": \"mine-*\"}]}]}");
        server = SluiceProcess.start("console", Map.of("SLUICE_AUTH_KEYS_FILE", keys.toString()));
        sqs = SqsClients.client(server.endpoint());
        base = server.adminEndpoint().toString().replaceAll("/$", "");
        sqs.createQueue(b -> b.queueName("orders-dlq"));
        sqs.createQueue(b -> b.queueName("orders").attributesWithStrings(Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\",\"maxReceiveCount\":\"3\"}")));
        sqs.createQueue(b -> b.queueName("events.fifo").attributesWithStrings(Map.of("FifoQueue", "true",
                "ContentBasedDeduplication", "true")));
        sqs.createQueue(b -> b.queueName("mine-jobs"));
        for (int i = 0; i < 3; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url("orders")).messageBody("order " + n));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (sqs != null) {
            sqs.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static String url(String queue) {
        return server.endpoint() + "/000000000000/" + queue;
    }

    static int messages(String queue) {
        Map<String, String> a = sqs.getQueueAttributes(b -> b.queueUrl(url(queue)).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributesAsStrings();
        return Integer.parseInt(a.get("ApproximateNumberOfMessages"))
                + Integer.parseInt(a.get("ApproximateNumberOfMessagesNotVisible"));
    }

    /** The console's "Oldest" column is a named-only attribute, also there for SDK users; never in All. */
    @Test
    void theAgeOfTheOldestMessageIsAnAttributeGivenWhenNamed() {
        String age = "SluiceApproximateAgeOfOldestMessage";
        sqs.createQueue(b -> b.queueName("aging"));
        assertEquals("0", sqs.getQueueAttributes(b -> b.queueUrl(url("aging")).attributeNamesWithStrings(age))
                .attributesAsStrings().get(age), "an empty queue");
        sqs.sendMessage(b -> b.queueUrl(url("aging")).messageBody("old"));
        await().atMost(Duration.ofSeconds(120)).until(() -> Long.parseLong(sqs.getQueueAttributes(b -> b
                .queueUrl(url("aging")).attributeNamesWithStrings(age)).attributesAsStrings().get(age)) >= 2);
        assertFalse(sqs.getQueueAttributes(b -> b.queueUrl(url("aging")).attributeNames(QueueAttributeName.ALL))
                .attributesAsStrings().containsKey(age), "All stays what SQS returns");
    }

    // ---- the doors, with raw HTTP ----

    private static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

    private static HttpResponse<String> get(String path, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return HTTP.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String path, String cookie, Map<String, String> form) throws Exception {
        StringBuilder body = new StringBuilder();
        form.forEach((k, v) -> body.append(body.length() == 0 ? "" : "&").append(k).append('=')
                .append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-www-form-urlencoded");
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return HTTP.send(b.POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String cookieValue(HttpResponse<?> r, String name) {
        return r.headers().allValues("set-cookie").stream().filter(c -> c.startsWith(name + "="))
                .map(c -> c.substring(name.length() + 1, c.indexOf(';'))).findFirst().orElse(null);
    }

    private static String csrf(String html) {
        Matcher m = CSRF.matcher(html);
        assertTrue(m.find(), "a form token in the page");
        return m.group(1);
    }

    /** Signs in with raw HTTP; the session cookie ({@code sluice_console=...}). */
    private static String signIn(Map<String, String> credentials) throws Exception {
        HttpResponse<String> page = get("/console/login", null);
        String login = cookieValue(page, "sluice_console_login");
        Map<String, String> form = new java.util.LinkedHashMap<>(credentials);
        form.put("csrf", csrf(page.body()));
        HttpResponse<String> r = post("/console/login", "sluice_console_login=" + login, form);
        assertEquals(303, r.statusCode(), r.body());
        return "sluice_console=" + cookieValue(r, "sluice_console");
    }

    @Test
    void theDoorsHoldWithoutABrowser() throws Exception {
        HttpResponse<String> anonymous = get("/console/queues", null);
        assertEquals(303, anonymous.statusCode(), "a page without a session goes to the sign-in");
        assertEquals("/console/login", anonymous.headers().firstValue("location").orElse(""));

        HttpResponse<String> page = get("/console/login", null);
        String login = cookieValue(page, "sluice_console_login");
        // a sign-in posted without the form's token (from another site, say) is refused before the secret is looked at
        HttpResponse<String> noToken = post("/console/login", "sluice_console_login=" + login,
                Map.of("access_key", SluiceProcess.ACCESS_KEY, "secret_key", SluiceProcess.SECRET_KEY));
        assertEquals(403, noToken.statusCode());
        assertEquals(null, cookieValue(noToken, "sluice_console"), "no session");
        HttpResponse<String> wrong = post("/console/login", "sluice_console_login=" + login, Map.of("csrf",
                csrf(page.body()), "access_key", SluiceProcess.ACCESS_KEY, "secret_key", "not-the-secret"));
        assertEquals(401, wrong.statusCode());
        assertEquals(null, cookieValue(wrong, "sluice_console"), "no session");
        HttpResponse<String> badToken = post("/console/login", "sluice_console_login=" + login, Map.of("csrf",
                csrf(page.body()), "token", "not-the-admin-token"));
        assertEquals(401, badToken.statusCode());

        page = get("/console/login", null);
        HttpResponse<String> ok = post("/console/login", "sluice_console_login=" + cookieValue(page,
                "sluice_console_login"), Map.of("csrf", csrf(page.body()), "access_key", SluiceProcess.ACCESS_KEY,
                "secret_key", SluiceProcess.SECRET_KEY));
        assertEquals(303, ok.statusCode());
        String setCookie = ok.headers().allValues("set-cookie").stream().filter(c -> c.startsWith("sluice_console="))
                .findFirst().orElseThrow();
        assertTrue(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict")
                && setCookie.contains("Path=/console"), setCookie);
        assertFalse(setCookie.contains("Secure"), "plain HTTP: a Secure cookie would never come back");
        String session = "sluice_console=" + cookieValue(ok, "sluice_console");
        HttpResponse<String> queues = get("/console/queues", session);
        assertEquals(200, queues.statusCode());
        assertTrue(queues.headers().firstValue("content-security-policy").orElse("").contains("frame-ancestors 'none'"));

        // a purge with the session's cookie but without its CSRF token: refused, nothing purged
        int before = messages("orders");
        assertTrue(before >= 3, "orders holds its messages: " + before);
        HttpResponse<String> forged = post("/console/queues/orders/purge", session, Map.of("confirm", "orders"));
        assertEquals(403, forged.statusCode());
        HttpResponse<String> wrongToken = post("/console/queues/orders/purge", session, Map.of("confirm", "orders",
                "csrf", "0".repeat(64)));
        assertEquals(403, wrongToken.statusCode());
        assertEquals(before, messages("orders"), "nothing was purged");

        // the admin token signs in too, and may see the cluster page
        String token = Files.readString(server.dataDir().resolve("admin-token")).trim();
        String adminSession = signIn(Map.of("token", token));
        HttpResponse<String> cluster = get("/console/cluster", adminSession);
        assertEquals(200, cluster.statusCode());
        assertTrue(cluster.body().contains("alive"), cluster.body());

        // a key limited to mine-* lists only those and may not open another queue or the cluster page
        String mine = signIn(Map.of("access_key", "mine", "secret_key", "mine-secret"));
        String list = get("/console/queues", mine).body();
        assertTrue(list.contains("mine-jobs"), list);
        assertFalse(list.contains("orders"), "another key's queue is not listed: " + list);
        assertEquals(403, get("/console/queues/orders", mine).statusCode());
        assertEquals(403, get("/console/cluster", mine).statusCode());
        String minePage = get("/console/queues/mine-jobs", mine).body();
        HttpResponse<String> sendElsewhere = post("/console/queues/orders/send", mine, Map.of("csrf", csrf(minePage),
                "body", "not mine"));
        assertEquals(403, sendElsewhere.statusCode(), "its rules decide, whatever the form says");
        assertEquals(before, messages("orders"));
    }

    // ---- the browser ----

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    private static WebDriver browser() {
        if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
            if ("1".equals(System.getenv("SLUICE_REQUIRE_TOOLS"))) {
                fail("chromium and chromedriver are not installed and SLUICE_REQUIRE_TOOLS=1 (Debian: apt-get"
                        + " install chromium chromium-driver)");
            }
            Assumptions.abort("chromium and chromedriver are not installed (Debian: apt-get install chromium"
                    + " chromium-driver)");
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(CHROMEDRIVER.toString())).build();
        return new ChromeDriver(service, options);
    }

    private static void screenshot(WebDriver driver, String name) throws Exception {
        Path dir = Path.of(System.getProperty("sluice.console.screenshots", "target/console-screenshots"));
        Files.createDirectories(dir);
        Path shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(shot, dir.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }

    private static void signIn(WebDriver driver, String key, String secret) {
        driver.get(base + "/console/login");
        driver.findElement(By.id("access_key")).sendKeys(key);
        driver.findElement(By.id("secret_key")).sendKeys(secret);
        driver.findElement(By.id("sign-in")).click();
    }

    private static String cell(WebDriver driver, String queue, int column) {
        return driver.findElement(By.xpath("//table[@id='queues']//tr[td/a[text()='" + queue + "']]/td[" + column
                + "]")).getText();
    }

    @Test
    void aBrowserSignsInListsSendsPurgesAndSeesTheCluster() throws Exception {
        sqs.createQueue(b -> b.queueName("shop"));
        for (int i = 0; i < 5; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url("shop")).messageBody("item " + n));
        }
        WebDriver driver = browser();
        try {
            driver.get(base + "/console/login");
            screenshot(driver, "sign-in");
            signIn(driver, SluiceProcess.ACCESS_KEY, "wrong-secret");
            assertTrue(driver.findElement(By.className("error")).getText().contains("Sign-in refused"));
            assertTrue(driver.getCurrentUrl().endsWith("/console/login"));

            signIn(driver, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            assertTrue(driver.getCurrentUrl().endsWith("/console/queues"), driver.getCurrentUrl());
            assertEquals("5", cell(driver, "shop", 4), "visible messages of shop");
            assertEquals("orders-dlq", cell(driver, "orders", 8), "dead-letter target");
            assertEquals("orders", cell(driver, "orders-dlq", 9), "dead-letter sources");
            assertEquals("FIFO", cell(driver, "events.fifo", 2));
            screenshot(driver, "queues");
            driver.findElement(By.linkText("Visible")).click();
            List<String> names = driver.findElements(By.xpath("//table[@id='queues']/tbody/tr/td[1]")).stream()
                    .map(e -> e.getText()).toList();
            assertEquals("shop", names.get(0), "sorted by visible messages, most first: " + names);

            driver.findElement(By.linkText("shop")).click();
            assertEquals("5", driver.findElement(By.id("attr-ApproximateNumberOfMessages")).getText());
            driver.findElement(By.id("body")).sendKeys("sent from the console");
            driver.findElement(By.id("send")).click();
            assertEquals("Message sent.", driver.findElement(By.id("done")).getText());
            assertEquals("6", driver.findElement(By.id("attr-ApproximateNumberOfMessages")).getText());
            screenshot(driver, "queue");
            List<String> bodies = new java.util.ArrayList<>();
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                sqs.receiveMessage(b -> b.queueUrl(url("shop")).maxNumberOfMessages(10).waitTimeSeconds(1))
                        .messages().stream().map(Message::body).forEach(bodies::add);
                return bodies.contains("sent from the console");
            });

            driver.findElement(By.id("confirm")).sendKeys("not-shop");
            driver.findElement(By.id("purge")).click();
            assertTrue(driver.findElement(By.id("problem")).getText().contains("Not purged"));
            assertEquals(6, messages("shop"), "a wrong confirmation purges nothing");
            driver.findElement(By.id("confirm")).sendKeys("shop");
            driver.findElement(By.id("purge")).click();
            assertEquals("Queue purged.", driver.findElement(By.id("done")).getText());
            await().atMost(Duration.ofSeconds(120)).until(() -> messages("shop") == 0);

            driver.findElement(By.linkText("Cluster")).click();
            assertEquals("alive", driver.findElement(By.xpath("//table[@id='backends']/tbody/tr[1]/td[3]")).getText());
            screenshot(driver, "cluster");

            driver.manage().window().setSize(new Dimension(390, 844)); // a phone
            driver.findElement(By.linkText("Queues")).click();
            assertTrue(driver.findElement(By.linkText("shop")).isDisplayed());
            screenshot(driver, "queues-phone");
            driver.manage().window().setSize(new Dimension(1280, 900));

            driver.findElement(By.id("sign-out")).click();
            assertTrue(driver.getCurrentUrl().endsWith("/console/login"));
            driver.get(base + "/console/queues");
            assertTrue(driver.getCurrentUrl().endsWith("/console/login"), "signed out: back to the sign-in");

            signIn(driver, "mine", "mine-secret");
            assertEquals(List.of("mine-jobs"), driver.findElements(By.xpath("//table[@id='queues']/tbody/tr/td[1]"))
                    .stream().map(e -> e.getText()).toList(), "a limited key lists only its queues");
            assertTrue(driver.findElements(By.linkText("Cluster")).isEmpty(), "no cluster page for it");
            driver.get(base + "/console/queues/orders");
            assertTrue(driver.findElement(By.id("problem")).getText().startsWith("AccessDenied"));
        } finally {
            driver.quit();
        }
    }
}
