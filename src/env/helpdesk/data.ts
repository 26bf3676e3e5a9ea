/**
 * The helpdesk world, read once from data/helpdesk/: the company handbook, the employees with
 * their leave balances, IT ticket categories, offices, and the simulated user's phrasings.
 * Validated with zod on first use so that a broken data file fails loudly, not mid-episode.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

// src/env/helpdesk/x.ts and dist/env/helpdesk/x.js are both three levels below the package.
const DATA = new URL("../../../data/helpdesk/", import.meta.url);

const factSchema = z.object({
  answer: z.string().min(1),
  questions: z.array(z.string().min(1)).length(2),
});

const passageSchema = z.object({
  id: z.string().regex(/^P\d{2}$/),
  section: z.string().min(1),
  title: z.string().min(1),
  keywords: z.array(z.string().min(1)).min(1),
  text: z.string().min(1),
  facts: z.array(factSchema).length(2),
});

const handbookSchema = z.object({ company: z.string(), passages: z.array(passageSchema).min(1) });

const LEAVE_TYPES = ["annual", "sick", "study", "volunteering"] as const;
export type LeaveType = (typeof LEAVE_TYPES)[number];

const employeeSchema = z.object({
  id: z.string().regex(/^E\d{4}$/),
  name: z.string().min(1),
  department: z.string().min(1),
  office: z.string().min(1),
  balances: z.object({
    annual: z.number().int().min(0),
    sick: z.number().int().min(0),
    study: z.number().int().min(0),
    volunteering: z.number().int().min(0),
  }),
});

const categorySchema = z.object({
  id: z.string().min(1),
  description: z.string().min(1),
  keywords: z.array(z.string().min(1)).min(1),
  problems: z.array(z.string().min(1)).min(1),
});

const companySchema = z.object({
  company: z.string(),
  assistant: z.string(),
  offices: z.array(z.string().min(1)).min(1),
  leaveTypes: z.array(z.object({ id: z.enum(LEAVE_TYPES), requestable: z.boolean() })),
  urgencies: z.array(z.string().min(1)).min(1),
  itCategories: z.array(categorySchema).min(1),
});

const phrases = z.array(z.string().min(1)).min(1);

const dialogueSchema = z.object({
  greeting: phrases,
  afterSuccess: phrases,
  afterGiveUp: phrases,
  closingSuccess: phrases,
  closingGiveUp: phrases,
  impatient: z.string(),
  policyRetry: phrases,
  tryAgain: z.string(),
  alreadyTold: z.string(),
  wrongFiling: z.string(),
  balance: z.object({ open: phrases, retry: phrases }),
  leave: z.object({
    open: phrases,
    typed: z.string(),
    untyped: z.string(),
    start: z.string(),
    end: z.string(),
    both: z.string(),
    slots: z.object({ type: z.string(), start: z.string(), end: z.string() }),
  }),
  ticket: z.object({
    open: phrases,
    slots: z.object({
      urgency: z.record(z.string(), z.string()),
      location: z.string(),
      remote: z.string(),
    }),
  }),
  ood: phrases,
});

export type Passage = z.infer<typeof passageSchema>;
export type Fact = z.infer<typeof factSchema>;
export type Employee = z.infer<typeof employeeSchema>;
export type ItCategory = z.infer<typeof categorySchema>;
export type Dialogue = z.infer<typeof dialogueSchema>;

export interface HelpdeskData {
  company: string;
  assistant: string;
  offices: readonly string[];
  leaveTypes: readonly LeaveType[];
  /** Leave types a request may be filed for (sick leave is reported, not booked). */
  requestableTypes: readonly LeaveType[];
  urgencies: readonly string[];
  categories: readonly ItCategory[];
  passages: readonly Passage[];
  passageById: ReadonlyMap<string, Passage>;
  employees: readonly Employee[];
  employeeById: ReadonlyMap<string, Employee>;
  dialogue: Dialogue;
}

function readJson<T>(file: string, schema: z.ZodType<T>): T {
  const raw: unknown = JSON.parse(readFileSync(new URL(file, DATA), "utf8"));
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`helpdesk: data/helpdesk/${file} is invalid: ${parsed.error.message}`);
  }
  return parsed.data;
}

let cached: HelpdeskData | undefined;

/** The helpdesk's data, read and checked on first use. */
export function helpdeskData(): HelpdeskData {
  if (cached) return cached;
  const handbook = readJson("handbook.json", handbookSchema);
  const company = readJson("company.json", companySchema);
  const { employees } = readJson(
    "employees.json",
    z.object({ employees: z.array(employeeSchema) }),
  );
  const dialogue = readJson("dialogue.json", dialogueSchema);
  cached = {
    company: company.company,
    assistant: company.assistant,
    offices: company.offices,
    leaveTypes: company.leaveTypes.map((t) => t.id),
    requestableTypes: company.leaveTypes.filter((t) => t.requestable).map((t) => t.id),
    urgencies: company.urgencies,
    categories: company.itCategories,
    passages: handbook.passages,
    passageById: new Map(handbook.passages.map((p) => [p.id, p])),
    employees,
    employeeById: new Map(employees.map((e) => [e.id, e])),
    dialogue,
  };
  return cached;
}
