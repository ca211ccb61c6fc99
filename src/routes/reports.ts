import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { isoDate } from '../core/validation.js';
import { occupancyReport } from '../services/reports/occupancy-report.js';
import { checkReportRange, venueRangeFields } from '../services/reports/report-range.js';
import { summaryReport } from '../services/reports/summary-report.js';
import { occupancyReportSchema } from '../services/reports/occupancy-report.js';
import { summaryReportSchema } from '../services/reports/summary-report.js';

export const reportRoutes = [
  defineRoute({
    method: 'get',
    path: '/reports/summary',
    operationId: 'getSummaryReport',
    responses: { 200: summaryReportSchema },
    tag: 'Reports',
    summary: 'Covers, reservations, statuses, sources and rates per serviceDate',
    description:
      '`days` has every serviceDate from `from` to `to` (at most 366, empty days included), `totals` the whole range. reservations: every ' +
      'reservation of the day, split by status and source; covers: party sizes of reservations neither cancelled nor no_show; noShowRate: ' +
      'no_show ÷ reservations not cancelled; averagePartySize: covers ÷ those reservations; averageSeatedMinutes: from seating to the ' +
      'table being freed. A rate or average without any reservation to count is null.',
    scope: 'reservations:read',
    query: z.object(venueRangeFields).superRefine(checkReportRange),
    handler: async ({ auth, query }) => ({ body: await summaryReport(auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/reports/occupancy',
    operationId: 'getOccupancyReport',
    responses: { 200: occupancyReportSchema },
    tag: 'Reports',
    summary: 'The floor of one serviceDate slot by slot',
    description:
      'For each slot of the open shifts (slotIntervalMinutes, from shift start to end): reservations and covers on the floor at that instant, ' +
      'the tables they use, the parties due to arrive within the slot, and occupancyRate = covers ÷ seats of the unblocked tables of the active plan.',
    scope: 'reservations:read',
    query: z.object({ venueId: z.uuid(), serviceDate: isoDate }),
    handler: async ({ auth, query }) => ({ body: await occupancyReport(auth, query) }),
  }),
];
