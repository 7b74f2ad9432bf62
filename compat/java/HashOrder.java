import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Scanner;

import org.apache.kafka.common.Uuid;

/**
 * The iteration order of the Java hash tables Kafka's group coordinator hands its assignors (read by
 * compat/test_java_hash_order.py). Each stdin line is a kind and keys; the answer line lists the
 * keys as the table iterates them. {@code S}: member ids put into a default HashMap; {@code M}:
 * topic ids (Kafka Uuids) put into a default HashMap; {@code U}: topic ids copied into a HashSet;
 * {@code I}: partition numbers copied into a HashSet.
 */
final class HashOrder {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        while (in.hasNextLine()) {
            String[] parts = in.nextLine().trim().split(" ");
            List<String> keys = List.of(parts).subList(1, parts.length);
            Iterable<?> order = switch (parts[0]) {
                case "S" -> { Map<String, Integer> m = new HashMap<>(); keys.forEach(k -> m.put(k, 0)); yield m.keySet(); }
                case "M" -> { Map<Uuid, Integer> m = new HashMap<>(); keys.forEach(k -> m.put(Uuid.fromString(k), 0)); yield m.keySet(); }
                case "U" -> { List<Uuid> l = new ArrayList<>(); keys.forEach(k -> l.add(Uuid.fromString(k))); yield new HashSet<>(l); }
                case "I" -> { List<Integer> l = new ArrayList<>(); keys.forEach(k -> l.add(Integer.parseInt(k))); yield new HashSet<>(l); }
                default -> throw new IllegalArgumentException(parts[0]);
            };
            StringBuilder out = new StringBuilder();
            for (Object k : order) out.append(out.length() == 0 ? "" : " ").append(k);
            System.out.println(out);
        }
    }
}
