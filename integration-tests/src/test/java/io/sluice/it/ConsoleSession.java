package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The web console from a test: raw HTTP (no redirects followed, so a test sees each answer) and a real browser
 * (Selenium driving Debian's chromium through its chromedriver; without them a test is skipped, or fails under
 * {@code SLUICE_REQUIRE_TOOLS=1}). {@code base} is an admin endpoint, e.g. {@code http://127.0.0.1:9325}.
 */
final class ConsoleSession {
    private static final Pattern CSRF = Pattern.compile("name=\"csrf\" value=\"([0-9a-f]{64})\"");
    private static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    private ConsoleSession() {
    }

    static HttpResponse<String> get(String base, String path, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return HTTP.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> post(String base, String path, String cookie, Map<String, String> form)
            throws Exception {
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

    static String cookieValue(HttpResponse<?> r, String name) {
        return r.headers().allValues("set-cookie").stream().filter(c -> c.startsWith(name + "="))
                .map(c -> c.substring(name.length() + 1, c.indexOf(';'))).findFirst().orElse(null);
    }

    static String csrf(String html) {
        Matcher m = CSRF.matcher(html);
        assertTrue(m.find(), "a form token in the page");
        return m.group(1);
    }

    /** Signs in with raw HTTP; the session cookie ({@code sluice_console=...}). */
    static String signIn(String base, Map<String, String> credentials) throws Exception {
        HttpResponse<String> page = get(base, "/console/login", null);
        String login = cookieValue(page, "sluice_console_login");
        Map<String, String> form = new java.util.LinkedHashMap<>(credentials);
        form.put("csrf", csrf(page.body()));
        HttpResponse<String> r = post(base, "/console/login", "sluice_console_login=" + login, form);
        assertEquals(303, r.statusCode(), r.body());
        return "sluice_console=" + cookieValue(r, "sluice_console");
    }

    /** Whether a browser test can run here; false only where a missing browser may skip it. */
    static boolean browserAvailable() {
        if (Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER)) {
            return true;
        }
        if ("1".equals(System.getenv("SLUICE_REQUIRE_TOOLS"))) {
            fail("chromium and chromedriver are not installed and SLUICE_REQUIRE_TOOLS=1 (Debian: apt-get install"
                    + " chromium chromium-driver)");
        }
        return false;
    }

    /** A headless chromium at 1280 x 900; the calling test is skipped without one (unless tools are required). */
    static WebDriver browser() {
        if (!browserAvailable()) {
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

    /** Saves what the browser shows as {@code <name>.png} (docs/console.md shows these). */
    static void screenshot(WebDriver driver, String name) throws Exception {
        Path dir = Path.of(System.getProperty("sluice.console.screenshots", "target/console-screenshots"));
        Files.createDirectories(dir);
        Path shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(shot, dir.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }

    static void signIn(WebDriver driver, String base, String key, String secret) {
        driver.get(base + "/console/login");
        driver.findElement(By.id("access_key")).sendKeys(key);
        driver.findElement(By.id("secret_key")).sendKeys(secret);
        follow(driver, By.id("sign-in"));
    }

    /**
     * Clicks what {@code target} finds (a link or a form's submit button) and waits until the browser has left the
     * page: a click returns once the event is dispatched, and a form's navigation starts a task later, so reading
     * the page straight after the click can still read the old one. The old page is gone when asking its root
     * element anything fails as stale; Chrome sometimes reports that instead as an inspector error that the node
     * "does not belong to the document" (the document was replaced under the call), which means the same. A target
     * in a live region that was reloaded between finding and clicking it is found again.
     */
    static void follow(WebDriver driver, By target) {
        WebElement page = driver.findElement(By.tagName("html"));
        for (int attempt = 1; ; attempt++) {
            try {
                driver.findElement(target).click();
                break;
            } catch (org.openqa.selenium.StaleElementReferenceException replaced) { // a live region reloaded under it
                if (attempt == 5) {
                    throw replaced;
                }
            }
        }
        new WebDriverWait(driver, Duration.ofSeconds(60)).until(d -> {
            try {
                page.isEnabled();
                return false;
            } catch (org.openqa.selenium.StaleElementReferenceException gone) {
                return true;
            } catch (org.openqa.selenium.WebDriverException e) {
                if (String.valueOf(e.getMessage()).contains("does not belong to the document")) {
                    return true;
                }
                throw e;
            }
        });
    }
}
