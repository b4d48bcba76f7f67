package io.dataclay.logic.collection;

import io.dataclay.logic.snapshot.SnapshotIndex;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * The union of every backend's reference graph, restricted to the objects of a collection's
 * snapshot, with the collection's roots; {@link #mark()} answers what is reachable from them.
 * Only snapshot objects are numbered: an edge to an object outside the snapshot is dropped
 * (that object is not collectable anyway), and an object outside the snapshot that a backend
 * reports is itself kept, so whatever it references becomes a root. A version's references
 * include its original (backends report it), and nothing references a version but what reaches
 * it like any other object: a version is collected like one.
 */
final class ReferenceGraph {
  private final SnapshotIndex objects;
  private final BitSet roots = new BitSet();
  private final BitSet reported = new BitSet();
  private int[] from = new int[1024];
  private int[] to = new int[1024];
  private int edges;

  /** An empty graph over the (sealed) snapshot {@code objects}. */
  ReferenceGraph(SnapshotIndex objects) {
    this.objects = objects;
  }

  /** A backend's report of one stored object and the objects it references. */
  void reported(String id, List<String> references) {
    int source = objects.indexOf(id);
    if (source < 0) {
      // Stored but not in the snapshot (registered since, or not yet): it is kept, so what it
      // references must be too.
      for (String r : references) {
        root(r);
      }
      return;
    }
    reported.set(source);
    for (String r : references) {
      int target = objects.indexOf(r);
      if (target >= 0 && target != source) {
        edge(source, target);
      }
    }
  }

  /** Makes an object a root; IDs outside the snapshot are ignored (they are never collected). */
  void root(String id) {
    int i = objects.indexOf(id);
    if (i >= 0) {
      roots.set(i);
    }
  }

  /** Whether some backend reported the object at {@code index}. */
  boolean wasReported(int index) {
    return reported.get(index);
  }

  /** The positions of the snapshot objects reachable from the roots. */
  BitSet mark() {
    int n = objects.size();
    int[] start = new int[n + 1];
    for (int e = 0; e < edges; e++) {
      start[from[e] + 1]++;
    }
    for (int i = 0; i < n; i++) {
      start[i + 1] += start[i];
    }
    int[] targets = new int[edges];
    int[] fill = Arrays.copyOf(start, n);
    for (int e = 0; e < edges; e++) {
      targets[fill[from[e]]++] = to[e];
    }
    BitSet marked = new BitSet(n);
    int[] stack = new int[Math.max(16, roots.cardinality())];
    int top = 0;
    for (int r = roots.nextSetBit(0); r >= 0; r = roots.nextSetBit(r + 1)) {
      marked.set(r);
      stack[top++] = r;
    }
    while (top > 0) {
      int v = stack[--top];
      for (int k = start[v]; k < start[v + 1]; k++) {
        int w = targets[k];
        if (!marked.get(w)) {
          marked.set(w);
          if (top == stack.length) {
            stack = Arrays.copyOf(stack, stack.length * 2);
          }
          stack[top++] = w;
        }
      }
    }
    return marked;
  }

  private void edge(int source, int target) {
    if (edges == from.length) {
      from = Arrays.copyOf(from, edges * 2);
      to = Arrays.copyOf(to, edges * 2);
    }
    from[edges] = source;
    to[edges] = target;
    edges++;
  }
}
