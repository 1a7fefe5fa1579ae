/** What the detector-accuracy probe reports (shared by the edge stage and the run report, so neither imports the probe). */
export interface PresenceSensorAccuracy {
  id: string;
  name: string;
  model: string;
  height: number;
  samples: number;
  /** Share of reports whose count equals the true count. */
  exactRate: number;
  /** Mean absolute count error per report. */
  mae: number;
  /** Mean distance from a detection to the true person it matches (≤ 1 m), metres. */
  locErrorM: number;
}

export interface TrafficSensorAccuracy {
  id: string;
  name: string;
  model: string;
  trueCrossings: number;
  counted: number;
  precision: number;
  recall: number;
}

export interface DetectorAccuracy {
  presence: {
    sensors: PresenceSensorAccuracy[];
    overall: { samples: number; exactRate: number; mae: number; locErrorM: number };
  };
  traffic: {
    sensors: TrafficSensorAccuracy[];
    overall: { trueCrossings: number; counted: number; precision: number; recall: number };
  };
}
