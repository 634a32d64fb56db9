package io.sluice.frontend.console;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.catalog.QueueMetadata;
import io.sluice.partition.QueueCounts;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** The queue list's selection: over every queue the key may list, filtered, sorted, paged, with the true total. */
class QueueListPageTest {
    static QueueMetadata queue(String name, long id) {
        return new QueueMetadata(name, id, name.endsWith(".fifo"), Map.of(), Map.of(), 0, 0, 1, 1);
    }

    static QueueHistory.Latest visible(int n) {
        return new QueueHistory.Latest(new QueueCounts(n, 0, 0, 0, -1, -1, -1, 0, 0), 0, 0);
    }

    /** 1,000 queues by name, each with its index visible except the deepest, which is last by name. */
    static List<QueueMetadata> queues = new ArrayList<>();
    static Map<Long, QueueHistory.Latest> figures = new HashMap<>();

    static {
        for (int i = 0; i < 999; i++) {
            queues.add(queue(String.format("q-%04d", i), i));
            figures.put((long) i, visible(i % 50));
        }
        queues.add(queue("zzz-deepest", 999));
        figures.put(999L, visible(60));
    }

    static QueueListPage.Selection select(Map<String, String> query, Predicate<String> listable,
                                          Predicate<String> readable) {
        return QueueListPage.select(queues, QueueListPage.View.of(query), listable, readable,
                new QueueHistory.Snapshot(1_000, figures), 1_000);
    }

    @Test
    void theDeepestQueueComesFirstByDepthAmongAllNotOnlyTheFirstPage() {
        QueueListPage.Selection s = select(Map.of("sort", "visible"), n -> true, n -> true);
        assertEquals("zzz-deepest", s.rows().get(0).queue().name());
        assertEquals(1_000, s.total());
        assertEquals(1_000, s.matching());
        assertEquals(QueueListPage.PAGE_SIZE, s.rows().size());
        QueueListPage.Selection ascending = select(Map.of("sort", "visible", "dir", "asc"), n -> true, n -> true);
        assertEquals(0, ascending.rows().get(0).figures().counts().visible());
    }

    @Test
    void aFilterIsASubstringIgnoringCaseAndTheTotalStaysTrue() {
        QueueListPage.Selection s = select(Map.of("filter", "DEEP"), n -> true, n -> true);
        assertEquals(List.of("zzz-deepest"), s.rows().stream().map(r -> r.queue().name()).toList());
        assertEquals(1, s.matching());
        assertEquals(1_000, s.total());
        QueueListPage.Selection middle = select(Map.of("filter", "-09"), n -> true, n -> true);
        assertEquals(99, middle.matching(), "q-0900 .. q-0998");
    }

    @Test
    void pagesFollowTheOrderAndAPastTheEndPageIsEmpty() {
        QueueListPage.Selection second = select(Map.of("page", "2"), n -> true, n -> true);
        assertEquals("q-0050", second.rows().get(0).queue().name());
        QueueListPage.Selection last = select(Map.of("page", "20"), n -> true, n -> true);
        assertEquals("zzz-deepest", last.rows().get(last.rows().size() - 1).queue().name());
        assertEquals(0, select(Map.of("page", "21"), n -> true, n -> true).rows().size());
        QueueListPage.Selection reversed = select(Map.of("dir", "desc"), n -> true, n -> true);
        assertEquals(List.of("zzz-deepest", "q-0998"), reversed.rows().subList(0, 2).stream()
                .map(r -> r.queue().name()).toList(), "by name, last first");
        // early pages come from a heap of the best, late ones from a full sort: both are the same order
        List<String> expected = queues.stream().sorted(java.util.Comparator.<QueueMetadata>comparingInt(q ->
                -figures.get(q.queueId()).counts().visible()).thenComparing(QueueMetadata::name))
                .map(QueueMetadata::name).toList();
        for (String page : List.of("1", "2", "18", "20")) {
            int first = (Integer.parseInt(page) - 1) * QueueListPage.PAGE_SIZE;
            assertEquals(expected.subList(first, Math.min(first + QueueListPage.PAGE_SIZE, expected.size())),
                    select(Map.of("sort", "visible", "page", page), n -> true, n -> true).rows().stream()
                            .map(r -> r.queue().name()).toList(), "page " + page + " by depth");
        }
        assertEquals("q-0000", select(Map.of("page", "x", "sort", "nonsense"), n -> true, n -> true).rows().get(0)
                .queue().name(), "unknown values fall back to the first page by name");
    }

    @Test
    void aKeySeesOnlyWhatItMayListAndSortsOnlyByFiguresItMayRead() {
        QueueListPage.Selection listed = select(Map.of(), n -> n.startsWith("q-00"), n -> true);
        assertEquals(100, listed.total(), "the total counts only queues the key may list");
        // the deepest queue's figures are not the key's to read: it is not ranked by them (nor shown)
        QueueListPage.Selection s = select(Map.of("sort", "visible"), n -> true, n -> !n.startsWith("zzz"));
        assertEquals(49, s.rows().get(0).figures().counts().visible());
        QueueListPage.Selection last = select(Map.of("sort", "visible", "page", "20"), n -> true,
                n -> !n.startsWith("zzz"));
        QueueListPage.Row bottom = last.rows().get(last.rows().size() - 1);
        assertEquals("zzz-deepest", bottom.queue().name());
        assertEquals(null, bottom.figures());
    }

    @Test
    void queuesWithoutFiguresInTheSampleSortLast() {
        QueueListPage.Selection s = QueueListPage.select(queues, QueueListPage.View.of(Map.of("sort", "visible",
                "dir", "asc")), n -> true, n -> true, new QueueHistory.Snapshot(1_000, Map.of(999L, visible(60))), 1_000);
        assertEquals("zzz-deepest", s.rows().get(0).queue().name(), "the one known comes first even ascending");
        assertEquals("q-0000", s.rows().get(1).queue().name(), "then the unknown by name");
    }
}
