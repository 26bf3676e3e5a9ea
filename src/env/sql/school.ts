/** The school database (students, teachers, courses, enrollments) and its question templates. */
import { createRng } from "../rng.js";
import { ask, type DatabaseContent, type DatabaseSpec } from "./catalog.js";
import { MAJORS, SCHOOL_DEPARTMENTS } from "./data.js";
import { clearTop, drawNames, groupBy, spread, sqlText, tally } from "./records.js";

const SCHOOL_STREAM = 0x7363686f;

const STUDENTS = `CREATE TABLE students (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  major TEXT NOT NULL,
  year INTEGER NOT NULL -- year of study, 1 to 4
)`;

const TEACHERS = `CREATE TABLE teachers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  department TEXT NOT NULL
)`;

const COURSES = `CREATE TABLE courses (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  department TEXT NOT NULL,
  credits INTEGER NOT NULL,
  teacher_id INTEGER NOT NULL REFERENCES teachers(id)
)`;

const ENROLLMENTS = `CREATE TABLE enrollments (
  student_id INTEGER NOT NULL REFERENCES students(id),
  course_id INTEGER NOT NULL REFERENCES courses(id),
  term TEXT NOT NULL, -- '2024-fall' or '2025-spring'
  grade INTEGER NOT NULL, -- 0 to 100
  PRIMARY KEY (student_id, course_id, term)
)`;

type Student = { id: number; name: string; major: string; year: number };
type Teacher = { id: number; name: string; department: string };
type Course = {
  id: number;
  title: string;
  department: string;
  credits: number;
  teacher_id: number;
};
type Enrollment = { student_id: number; course_id: number; term: string; grade: number };

interface SchoolRecords {
  students: Student[];
  teachers: Teacher[];
  courses: Course[];
  enrollments: Enrollment[];
}

const TERMS = ["2024-fall", "2025-spring"] as const;
const termName = (term: string) => (term === "2024-fall" ? "fall 2024" : "spring 2025");

function generateRecords(): SchoolRecords {
  const rng = createRng(SCHOOL_STREAM);
  const people = drawNames(rng, 150 + 15);
  const students = people.slice(0, 150).map((name, i) => ({
    id: i + 1,
    name,
    major: rng.pick(MAJORS),
    year: 1 + rng.int(4),
  }));
  const teachers: Teacher[] = [];
  const courses: Course[] = [];
  const teacherNames = people.slice(150);
  for (const { department, courses: titles } of SCHOOL_DEPARTMENTS) {
    // Two or three teachers per department; courses go round-robin so each teaches one or more.
    const staff = Array.from({ length: 2 + rng.int(2) }, () => {
      const teacher = { id: teachers.length + 1, name: teacherNames.pop() ?? "", department };
      teachers.push(teacher);
      return teacher;
    });
    titles.forEach((title, i) => {
      const teacher = staff[i % staff.length] as Teacher;
      courses.push({
        id: courses.length + 1,
        title,
        department,
        credits: 3 + rng.int(4),
        teacher_id: teacher.id,
      });
    });
  }
  const enrollments: Enrollment[] = [];
  for (const student of students) {
    for (const term of TERMS) {
      for (const course of rng.shuffle(courses).slice(0, 1 + rng.int(4))) {
        // Roughly bell-shaped grades around 72, clamped to 0..100.
        const spreadOut = rng.next() + rng.next() + rng.next() - 1.5;
        const grade = Math.max(0, Math.min(100, Math.round(72 + spreadOut * 30)));
        enrollments.push({ student_id: student.id, course_id: course.id, term, grade });
      }
    }
  }
  return { students, teachers, courses, enrollments };
}

const DEPARTMENTS = SCHOOL_DEPARTMENTS.map((d) => d.department);
const ORDINALS = ["first", "second", "third", "fourth"];

function questions(records: SchoolRecords) {
  const { students, teachers, courses, enrollments } = records;
  const courseById = new Map(courses.map((c) => [c.id, c]));
  const studentById = new Map(students.map((s) => [s.id, s]));
  const courseOf = (e: Enrollment) => courseById.get(e.course_id) as Course;
  const studentOf = (e: Enrollment) => studentById.get(e.student_id) as Student;
  const average = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const courseTerms = courses.flatMap((course) =>
    TERMS.map((term) => ({ title: course.title, id: course.id, term })),
  );
  const enrolledIn = (id: number, term: string) =>
    enrollments.filter((e) => e.course_id === id && e.term === term);
  const enrolledStudents = students.filter((s) => enrollments.some((e) => e.student_id === s.id));

  return [
    ask(
      "school.students-in-major-year",
      spread(
        MAJORS.flatMap((major) => [1, 2, 3, 4].map((year) => ({ major, year }))).filter(
          ({ major, year }) => students.some((s) => s.major === major && s.year === year),
        ),
        16,
      ),
      [
        ({ major, year }) => `How many ${ORDINALS[year - 1]}-year students major in ${major}?`,
        ({ major, year }) => `Count the students in year ${year} whose major is '${major}'.`,
      ],
      ({ major, year }) =>
        `SELECT COUNT(*) FROM students WHERE major = ${sqlText(major)} AND year = ${year}`,
    ),
    ask(
      "school.average-grade-in-course",
      spread(
        courseTerms.filter(({ id, term }) => enrolledIn(id, term).length > 0),
        16,
      ),
      [
        ({ title, term }) => `What is the average grade in ${title} in the ${termName(term)} term?`,
        ({ title, term }) =>
          `Compute the mean grade of the enrollments in the course '${title}' for term '${term}'.`,
      ],
      ({ title, term }) =>
        "SELECT AVG(e.grade) FROM enrollments e JOIN courses c ON c.id = e.course_id " +
        `WHERE c.title = ${sqlText(title)} AND e.term = '${term}'`,
    ),
    ask(
      "school.teacher-of-course",
      spread(
        courses.map((c) => c.title),
        12,
      ),
      [
        (title) => `Who teaches ${title}? Give the teacher's name.`,
        (title) => `What is the name of the teacher of the course '${title}'?`,
      ],
      (title) =>
        "SELECT t.name FROM teachers t JOIN courses c ON c.teacher_id = t.id " +
        `WHERE c.title = ${sqlText(title)}`,
    ),
    ask(
      "school.high-scorers",
      spread(
        courseTerms
          .flatMap((ct) => [85, 90].map((grade) => ({ ...ct, grade })))
          .filter(({ id, term, grade }) => enrolledIn(id, term).some((e) => e.grade >= grade)),
        14,
      ),
      [
        ({ title, term, grade }) =>
          `Which students scored at least ${grade} in ${title} in the ${termName(term)} term? ` +
          "List their names.",
        ({ title, term, grade }) =>
          `Give the names of the students with a grade of ${grade} or more in '${title}' ` +
          `(term '${term}').`,
      ],
      ({ title, term, grade }) =>
        "SELECT s.name FROM students s JOIN enrollments e ON e.student_id = s.id " +
        `JOIN courses c ON c.id = e.course_id WHERE c.title = ${sqlText(title)} ` +
        `AND e.term = '${term}' AND e.grade >= ${grade}`,
    ),
    ask(
      "school.total-credits",
      spread(
        enrolledStudents.map((s) => s.name),
        12,
      ),
      [
        (name) =>
          `How many credits has ${name} taken in total, over all terms (sum of the credits of ` +
          "every course enrollment)?",
        (name) => `What is the sum of the credits of all the courses ${name} enrolled in?`,
      ],
      (name) =>
        "SELECT SUM(c.credits) FROM enrollments e JOIN courses c ON c.id = e.course_id " +
        `JOIN students s ON s.id = e.student_id WHERE s.name = ${sqlText(name)}`,
    ),
    ask(
      "school.best-course-in-department",
      DEPARTMENTS.flatMap((department) => TERMS.map((term) => ({ department, term }))).filter(
        ({ department, term }) =>
          clearTop(
            courses
              .filter((c) => c.department === department)
              .map((c) => enrolledIn(c.id, term).map((e) => e.grade))
              .filter((grades) => grades.length > 0)
              .map(average),
            1,
          ),
      ),
      [
        ({ department, term }) =>
          `Which ${department} course had the highest average grade in the ${termName(term)} ` +
          "term? Give the course title and that average.",
        ({ department, term }) =>
          `Find the course of the ${department} department with the best mean grade in term ` +
          `'${term}', with its title and the mean grade.`,
      ],
      ({ department, term }) =>
        "SELECT c.title, AVG(e.grade) AS average FROM courses c " +
        "JOIN enrollments e ON e.course_id = c.id " +
        `WHERE c.department = ${sqlText(department)} AND e.term = '${term}' ` +
        "GROUP BY c.id ORDER BY average DESC LIMIT 1",
    ),
    ask(
      "school.courses-per-teacher",
      DEPARTMENTS,
      [
        (department) =>
          `How many courses does each teacher of the ${department} department teach? Give ` +
          "each teacher's name and number of courses.",
        (department) =>
          `For every teacher in the '${department}' department, list the name and the count ` +
          "of courses they teach.",
      ],
      (department) =>
        "SELECT t.name, COUNT(*) FROM teachers t JOIN courses c ON c.teacher_id = t.id " +
        `WHERE t.department = ${sqlText(department)} GROUP BY t.id`,
    ),
    ask(
      "school.enrollment-count",
      spread(courseTerms.filter(({ id, term }) => enrolledIn(id, term).length > 0).reverse(), 16),
      [
        ({ title, term }) =>
          `How many students are enrolled in ${title} in the ${termName(term)} term?`,
        ({ title, term }) => `Count the enrollments in '${title}' for term '${term}'.`,
      ],
      ({ title, term }) =>
        "SELECT COUNT(*) FROM enrollments e JOIN courses c ON c.id = e.course_id " +
        `WHERE c.title = ${sqlText(title)} AND e.term = '${term}'`,
    ),
    ask(
      "school.busy-students",
      MAJORS.flatMap((major) => TERMS.map((term) => ({ major, term, count: 2 }))).filter(
        ({ major, term, count }) => {
          const loads = tally(
            enrollments.filter((e) => e.term === term && studentOf(e).major === major),
            (e) => e.student_id,
          );
          return [...loads.values()].some((n) => n > count);
        },
      ),
      [
        ({ major, term, count }) =>
          `Which ${major} students take more than ${count} courses in the ${termName(term)} ` +
          "term? List their names.",
        ({ major, term, count }) =>
          `Give the names of the students majoring in '${major}' who are enrolled in more ` +
          `than ${count} courses in term '${term}'.`,
      ],
      ({ major, term, count }) =>
        "SELECT s.name FROM students s JOIN enrollments e ON e.student_id = s.id " +
        `WHERE s.major = ${sqlText(major)} AND e.term = '${term}' ` +
        `GROUP BY s.id HAVING COUNT(*) > ${count}`,
    ),
    ask(
      "school.top-students",
      TERMS.flatMap((term) => [3, 4, 5].map((k) => ({ term, k }))).filter(({ term, k }) => {
        const grades = groupBy(
          enrollments.filter((e) => e.term === term),
          (e) => e.student_id,
        );
        const averages = [...grades.values()].filter((g) => g.length >= 3);
        return clearTop(
          averages.map((g) => average(g.map((e) => e.grade))),
          k,
        );
      }),
      [
        ({ term, k }) =>
          `Who are the ${k} students with the highest average grade in the ${termName(term)} ` +
          "term, counting only students with at least 3 courses that term? Give each name " +
          "and average, best first.",
        ({ term, k }) =>
          `Among students enrolled in 3 or more courses in term '${term}', list the ${k} ` +
          "with the best mean grade that term: name and mean grade, in descending order.",
      ],
      ({ term, k }) =>
        "SELECT s.name, AVG(e.grade) AS average FROM students s " +
        `JOIN enrollments e ON e.student_id = s.id WHERE e.term = '${term}' ` +
        `GROUP BY s.id HAVING COUNT(*) >= 3 ORDER BY average DESC LIMIT ${k}`,
    ),
    ask(
      "school.average-grade-of-major",
      MAJORS.filter((major) => enrollments.some((e) => studentOf(e).major === major)),
      [
        (major) => `What is the average grade of ${major} majors over all their enrollments?`,
        (major) => `Compute the mean of all grades received by students whose major is '${major}'.`,
      ],
      (major) =>
        "SELECT AVG(e.grade) FROM enrollments e JOIN students s ON s.id = e.student_id " +
        `WHERE s.major = ${sqlText(major)}`,
    ),
    ask(
      "school.failing-grades",
      DEPARTMENTS.flatMap((department) => TERMS.map((term) => ({ department, term }))).filter(
        ({ department, term }) =>
          enrollments.some(
            (e) => e.term === term && e.grade < 50 && courseOf(e).department === department,
          ),
      ),
      [
        ({ department, term }) =>
          `How many grades below 50 were given in ${department} courses in the ` +
          `${termName(term)} term?`,
        ({ department, term }) =>
          `Count the enrollments in courses of the '${department}' department in term ` +
          `'${term}' with a grade under 50.`,
      ],
      ({ department, term }) =>
        "SELECT COUNT(*) FROM enrollments e JOIN courses c ON c.id = e.course_id " +
        `WHERE c.department = ${sqlText(department)} AND e.term = '${term}' AND e.grade < 50`,
    ),
    ask(
      "school.heavy-courses",
      DEPARTMENTS.filter((department) =>
        courses.some((c) => c.department === department && c.credits >= 5),
      ),
      [
        (department) => `List the titles of the ${department} courses worth at least 5 credits.`,
        (department) =>
          `Which courses of the '${department}' department have 5 or more credits? Give titles.`,
      ],
      (department) =>
        `SELECT title FROM courses WHERE department = ${sqlText(department)} AND credits >= 5`,
    ),
    ask(
      "school.students-of-teacher",
      spread(
        teachers
          .flatMap((t) => TERMS.map((term) => ({ teacher: t.name, id: t.id, term })))
          .filter(({ id, term }) =>
            enrollments.some((e) => e.term === term && courseOf(e).teacher_id === id),
          ),
        12,
      ),
      [
        ({ teacher, term }) =>
          `How many different students took at least one course taught by ${teacher} in the ` +
          `${termName(term)} term?`,
        ({ teacher, term }) =>
          `Count the distinct students enrolled in any course of the teacher ${teacher} in ` +
          `term '${term}'.`,
      ],
      ({ teacher, term }) =>
        "SELECT COUNT(DISTINCT e.student_id) FROM enrollments e " +
        "JOIN courses c ON c.id = e.course_id JOIN teachers t ON t.id = c.teacher_id " +
        `WHERE t.name = ${sqlText(teacher)} AND e.term = '${term}'`,
    ),
  ].flat();
}

export const schoolDatabase: DatabaseSpec = {
  name: "school",
  description: "a university: students, teachers, courses and the grades of each enrollment",
  generate(): DatabaseContent {
    const records = generateRecords();
    return {
      tables: [
        { name: "students", ddl: STUDENTS, rows: records.students },
        { name: "teachers", ddl: TEACHERS, rows: records.teachers },
        { name: "courses", ddl: COURSES, rows: records.courses },
        { name: "enrollments", ddl: ENROLLMENTS, rows: records.enrollments },
      ],
      questions: questions(records),
    };
  },
};
