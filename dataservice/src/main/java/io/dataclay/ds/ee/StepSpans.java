package io.dataclay.ds.ee;

import io.dataclay.proto.EnvironmentSpan;
import io.dataclay.server.tracing.EnvironmentStep;
import io.dataclay.server.tracing.StepSpan;
import java.util.ArrayList;
import java.util.List;

/**
 * The steps an execution environment reports in a result (ExecuteResult.spans) as plain
 * {@link StepSpan}s, at most {@link EnvironmentStep#MAX_SPANS} of them; {@link EnvironmentStep}
 * checks the rest of what they say.
 */
final class StepSpans {
  private StepSpans() {}

  /** The first {@link EnvironmentStep#MAX_SPANS} of {@code spans}, unchecked. */
  static List<StepSpan> of(List<EnvironmentSpan> spans) {
    List<StepSpan> out = new ArrayList<>(Math.min(spans.size(), EnvironmentStep.MAX_SPANS));
    for (EnvironmentSpan s : spans.subList(0, Math.min(spans.size(), EnvironmentStep.MAX_SPANS))) {
      out.add(new StepSpan(s.getName(), s.getStartUnixNano(), s.getEndUnixNano(), s.getAttributesMap(), s.getError(),
          s.getParent()));
    }
    return out;
  }
}
