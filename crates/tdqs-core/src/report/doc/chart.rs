//! A chart of the first pair's tools as data: for each drawn tool, its base and head scores and
//! whether it fell. The HTML backend draws it as inline SVG (`svg.rs`); the text markups leave
//! it out (the tables carry the same numbers).

use crate::arith::{Tenths, Tier};
use crate::rubric::ToolDimension;
use crate::score::ToolResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// TDQS per tool, base against head, as bars on a 0–5 axis.
    Bars,
    /// The six dimensions per tool, coloured by score.
    HeatMap,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub kind: ChartKind,
    pub rows: Vec<ChartRow>,
}

/// One tool of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartRow {
    pub name: String,
    pub base: Option<ChartScores>,
    pub head: Option<ChartScores>,
    /// One of the tools the report says fell.
    pub fell: bool,
}

/// One side's scores of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartScores {
    pub tdqs: Tenths,
    pub tier: Tier,
    /// In [`ToolDimension::ALL`] order; `None` where the side has no score.
    pub dimensions: Vec<Option<u8>>,
}

impl From<&ToolResult> for ChartScores {
    fn from(t: &ToolResult) -> ChartScores {
        ChartScores {
            tdqs: t.tdqs,
            tier: t.tier,
            dimensions: ToolDimension::ALL
                .into_iter()
                .map(|d| t.scores.get(&d).copied())
                .collect(),
        }
    }
}
