/** The HR database (departments, employees, projects, assignments) and its question templates. */
import { createRng } from "../rng.js";
import { ask, type DatabaseContent, type DatabaseSpec } from "./catalog.js";
import { CITIES, HR_DEPARTMENTS, PROJECT_CODENAMES } from "./data.js";
import { addDays, clearTop, drawDistinct, drawNames, spread, sqlText, tally } from "./records.js";

const HR_STREAM = 0x68720000;

const DEPARTMENTS_DDL = `CREATE TABLE departments (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  location TEXT NOT NULL -- city of the department's office
)`;

const EMPLOYEES_DDL = `CREATE TABLE employees (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  department_id INTEGER NOT NULL REFERENCES departments(id),
  job_title TEXT NOT NULL,
  salary INTEGER NOT NULL, -- yearly, in dollars
  hire_date TEXT NOT NULL, -- YYYY-MM-DD
  manager_id INTEGER REFERENCES employees(id) -- NULL for department heads
)`;

const PROJECTS_DDL = `CREATE TABLE projects (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  department_id INTEGER NOT NULL REFERENCES departments(id),
  budget INTEGER NOT NULL, -- dollars
  start_date TEXT NOT NULL -- YYYY-MM-DD
)`;

const ASSIGNMENTS_DDL = `CREATE TABLE assignments (
  employee_id INTEGER NOT NULL REFERENCES employees(id),
  project_id INTEGER NOT NULL REFERENCES projects(id),
  hours_per_week INTEGER NOT NULL,
  PRIMARY KEY (employee_id, project_id)
)`;

type Department = { id: number; name: string; location: string };
type Employee = {
  id: number;
  name: string;
  department_id: number;
  job_title: string;
  salary: number;
  hire_date: string;
  manager_id: number | null;
};
type Project = {
  id: number;
  name: string;
  department_id: number;
  budget: number;
  start_date: string;
};
type Assignment = { employee_id: number; project_id: number; hours_per_week: number };

interface HrRecords {
  departments: Department[];
  employees: Employee[];
  projects: Project[];
  assignments: Assignment[];
}

/** Offices are in five of the cities, so several departments share a location. */
const LOCATIONS = CITIES.slice(0, 5);

function generateRecords(): HrRecords {
  const rng = createRng(HR_STREAM);
  const departments = HR_DEPARTMENTS.map((d, i) => ({
    id: i + 1,
    name: d.name,
    location: rng.pick(LOCATIONS),
  }));
  const names = drawNames(rng, 220);
  const salaries = new Set<number>();
  const employees: Employee[] = [];
  const hire = (department: Department, title: string, low: number, high: number) => {
    const employee: Employee = {
      id: employees.length + 1,
      name: names[employees.length] ?? "",
      department_id: department.id,
      job_title: title,
      salary: drawDistinct(salaries, () => low + 50 * rng.int((high - low) / 50)),
      hire_date: addDays("2012-01-01", rng.int(4700)),
      manager_id: null,
    };
    employees.push(employee);
    return employee;
  };
  for (const department of departments) {
    const titles = HR_DEPARTMENTS[department.id - 1]?.titles ?? [];
    // A head, two team leads reporting to the head, and staff reporting to a lead or the head.
    const head = hire(department, `Head of ${department.name}`, 140000, 190000);
    const leads = [0, 1].map(() => {
      const [title, low, high] = titles[0] ?? ["Team Lead", 80000, 120000];
      const lead = hire(department, title, low, high);
      lead.manager_id = head.id;
      return lead;
    });
    const staffCount = 15 + rng.int(8);
    for (let i = 0; i < staffCount; i++) {
      const [title, low, high] = rng.pick(titles);
      const member = hire(department, title, low, high);
      member.manager_id = rng.next() < 0.2 ? head.id : rng.pick(leads).id;
    }
  }
  const budgets = new Set<number>();
  const projects = PROJECT_CODENAMES.map((codename, i) => ({
    id: i + 1,
    name: `Project ${codename}`,
    department_id: 1 + rng.int(departments.length),
    budget: drawDistinct(budgets, () => 1000 * (20 + rng.int(480))),
    start_date: addDays("2022-01-01", rng.int(1000)),
  }));
  const assignments: Assignment[] = [];
  for (const project of projects) {
    const own = employees.filter((e) => e.department_id === project.department_id);
    const team = [
      ...rng.shuffle(own).slice(0, 4 + rng.int(6)),
      ...rng
        .shuffle(employees.filter((e) => e.department_id !== project.department_id))
        .slice(0, rng.int(4)),
    ];
    for (const employee of team) {
      assignments.push({
        employee_id: employee.id,
        project_id: project.id,
        hours_per_week: 2 * (2 + rng.int(19)),
      });
    }
  }
  return { departments, employees, projects, assignments };
}

function questions(records: HrRecords) {
  const { departments, employees, projects, assignments } = records;
  const departmentNames = departments.map((d) => d.name);
  const departmentByName = new Map(departments.map((d) => [d.name, d]));
  const inDepartment = (name: string) =>
    employees.filter((e) => e.department_id === departmentByName.get(name)?.id);
  const average = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const companyAverage = average(employees.map((e) => e.salary));
  const assigned = new Set(assignments.map((a) => a.employee_id));
  const staffedProjects = projects.filter((p) => assignments.some((a) => a.project_id === p.id));
  const managers = employees.filter((e) => employees.some((r) => r.manager_id === e.id));
  const titles = [...new Set(employees.map((e) => e.job_title))].filter(
    (title) => !title.startsWith("Head of"),
  );
  const deptAverages = departmentNames.map((name) =>
    average(inDepartment(name).map((e) => e.salary)),
  );

  return [
    ask(
      "hr.headcount",
      departmentNames,
      [
        (name) => `How many employees work in the ${name} department?`,
        (name) => `Count the employees of the department named '${name}'.`,
      ],
      (name) =>
        "SELECT COUNT(*) FROM employees e JOIN departments d ON d.id = e.department_id " +
        `WHERE d.name = ${sqlText(name)}`,
    ),
    ask(
      "hr.average-salary",
      departmentNames,
      [
        (name) => `What is the average salary in the ${name} department?`,
        (name) => `Compute the mean salary of the employees of the '${name}' department.`,
      ],
      (name) =>
        "SELECT AVG(e.salary) FROM employees e JOIN departments d ON d.id = e.department_id " +
        `WHERE d.name = ${sqlText(name)}`,
    ),
    ask(
      "hr.second-best-paid",
      departmentNames,
      [
        (name) =>
          `Who is the second highest-paid employee of the ${name} department? Give the name ` +
          "and salary.",
        (name) =>
          `In the '${name}' department, find the employee with the second largest salary, ` +
          "with name and salary.",
      ],
      (name) =>
        "SELECT e.name, e.salary FROM employees e JOIN departments d ON d.id = e.department_id " +
        `WHERE d.name = ${sqlText(name)} ORDER BY e.salary DESC LIMIT 1 OFFSET 1`,
    ),
    ask(
      "hr.hired-in-year",
      [...tally(employees, (e) => e.hire_date.slice(0, 4)).keys()].sort(),
      [
        (year) => `How many employees were hired in ${year}?`,
        (year) => `Count the employees whose hire date is in the year ${year}.`,
      ],
      (year) => `SELECT COUNT(*) FROM employees WHERE strftime('%Y', hire_date) = '${year}'`,
    ),
    ask(
      "hr.direct-reports",
      spread(
        managers.map((m) => m.name),
        14,
      ),
      [
        (name) => `List the names of the employees who report directly to ${name}.`,
        (name) => `Whose manager is ${name}? Give the names of those employees.`,
      ],
      (name) =>
        "SELECT e.name FROM employees e JOIN employees m ON m.id = e.manager_id " +
        `WHERE m.name = ${sqlText(name)}`,
    ),
    ask(
      "hr.well-paid-in-location",
      spread(
        LOCATIONS.flatMap((location) =>
          [60000, 80000, 100000].map((salary) => ({ location, salary })),
        ).filter(({ location, salary }) =>
          employees.some(
            (e) => e.salary > salary && departments[e.department_id - 1]?.location === location,
          ),
        ),
        14,
      ),
      [
        ({ location, salary }) =>
          `How many employees of departments located in ${location} earn more than ${salary}?`,
        ({ location, salary }) =>
          `Count the employees with a salary above ${salary} whose department's location is ` +
          `'${location}'.`,
      ],
      ({ location, salary }) =>
        "SELECT COUNT(*) FROM employees e JOIN departments d ON d.id = e.department_id " +
        `WHERE d.location = ${sqlText(location)} AND e.salary > ${salary}`,
    ),
    ask(
      "hr.project-hours",
      spread(
        staffedProjects.map((p) => p.name),
        14,
      ),
      [
        (name) => `How many hours per week in total are assigned to ${name}?`,
        (name) => `Sum the weekly hours of all assignments to the project '${name}'.`,
      ],
      (name) =>
        "SELECT SUM(a.hours_per_week) FROM assignments a JOIN projects p ON p.id = a.project_id " +
        `WHERE p.name = ${sqlText(name)}`,
    ),
    ask(
      "hr.project-team",
      spread(staffedProjects.map((p) => p.name).reverse(), 14),
      [
        (name) => `Which employees are assigned to ${name}? Give their names.`,
        (name) => `List the names of the people working on the project '${name}'.`,
      ],
      (name) =>
        "SELECT e.name FROM employees e JOIN assignments a ON a.employee_id = e.id " +
        `JOIN projects p ON p.id = a.project_id WHERE p.name = ${sqlText(name)}`,
    ),
    ask(
      "hr.department-budget",
      departmentNames.filter((name) =>
        projects.some((p) => p.department_id === departmentByName.get(name)?.id),
      ),
      [
        (name) => `What is the total budget of the projects run by the ${name} department?`,
        (name) => `Sum the budgets of all projects belonging to the '${name}' department.`,
      ],
      (name) =>
        "SELECT SUM(p.budget) FROM projects p JOIN departments d ON d.id = p.department_id " +
        `WHERE d.name = ${sqlText(name)}`,
    ),
    ask(
      "hr.top-earners-by-title",
      spread(
        titles
          .flatMap((title) => [2, 3].map((k) => ({ title, k })))
          .filter(({ title, k }) =>
            clearTop(
              employees.filter((e) => e.job_title === title).map((e) => e.salary),
              k,
            ),
          ),
        14,
      ),
      [
        ({ title, k }) =>
          `Who are the ${k} highest-paid employees with the job title '${title}'? Give name ` +
          "and salary, highest first.",
        ({ title, k }) =>
          `List the ${k} best-paid people whose job_title is '${title}', with their salaries, ` +
          "in descending order of salary.",
      ],
      ({ title, k }) =>
        `SELECT name, salary FROM employees WHERE job_title = ${sqlText(title)} ` +
        `ORDER BY salary DESC LIMIT ${k}`,
    ),
    ask(
      "hr.unassigned",
      departmentNames.filter((name) => inDepartment(name).some((e) => !assigned.has(e.id))),
      [
        (name) =>
          `Which employees of the ${name} department are not assigned to any project? List ` +
          "their names.",
        (name) =>
          `Give the names of the '${name}' employees that have no row in the assignments table.`,
      ],
      (name) =>
        "SELECT e.name FROM employees e JOIN departments d ON d.id = e.department_id " +
        `WHERE d.name = ${sqlText(name)} ` +
        "AND e.id NOT IN (SELECT employee_id FROM assignments)",
    ),
    ask(
      "hr.well-paid-departments",
      [60000, 65000, 70000, 75000].filter((limit) => {
        const over = deptAverages.filter((avg) => avg > limit).length;
        return over > 0 && over < departments.length;
      }),
      [
        (limit) => `Which departments have an average salary above ${limit}? List their names.`,
        (limit) =>
          `Give the names of the departments whose employees' mean salary exceeds ${limit}.`,
      ],
      (limit) =>
        "SELECT d.name FROM departments d JOIN employees e ON e.department_id = d.id " +
        `GROUP BY d.id HAVING AVG(e.salary) > ${limit}`,
    ),
    ask(
      "hr.above-company-average",
      departmentNames.filter((name) => inDepartment(name).some((e) => e.salary > companyAverage)),
      [
        (name) =>
          `How many employees of the ${name} department earn more than the average salary ` +
          "of the whole company?",
        (name) =>
          `Count the '${name}' employees whose salary is above the mean salary of all employees.`,
      ],
      (name) =>
        "SELECT COUNT(*) FROM employees e JOIN departments d ON d.id = e.department_id " +
        `WHERE d.name = ${sqlText(name)} ` +
        "AND e.salary > (SELECT AVG(salary) FROM employees)",
    ),
    ask(
      "hr.projects-of-employee",
      spread(
        employees.filter((e) => assigned.has(e.id)).map((e) => e.name),
        12,
      ),
      [
        (name) => `On how many projects is ${name} working?`,
        (name) => `Count the project assignments of the employee ${name}.`,
      ],
      (name) =>
        "SELECT COUNT(*) FROM assignments a JOIN employees e ON e.id = a.employee_id " +
        `WHERE e.name = ${sqlText(name)}`,
    ),
  ].flat();
}

export const hrDatabase: DatabaseSpec = {
  name: "hr",
  description: "a company's HR records: departments, employees, projects and assignments",
  generate(): DatabaseContent {
    const records = generateRecords();
    return {
      tables: [
        { name: "departments", ddl: DEPARTMENTS_DDL, rows: records.departments },
        { name: "employees", ddl: EMPLOYEES_DDL, rows: records.employees },
        { name: "projects", ddl: PROJECTS_DDL, rows: records.projects },
        { name: "assignments", ddl: ASSIGNMENTS_DDL, rows: records.assignments },
      ],
      questions: questions(records),
    };
  },
};
